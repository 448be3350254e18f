"""scripts/compare_runs.py: two run folders compared value by value."""
import importlib.util
import json

from compsuite.foundation.checkout import ROOT

spec = importlib.util.spec_from_file_location("compare_runs", ROOT / "scripts" / "compare_runs.py")
compare_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_runs)


def write(root, unit, result):
    (root / unit).mkdir(parents=True, exist_ok=True)
    (root / unit / "result.json").write_text(json.dumps(result))


def test_equal_runs_differ_only_in_volatile_provenance_and_paths(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "task/r/seed1", {"git": "x", "train_wall_s": 3.0, "checkpoint": "/a/ck.pt",
                              "accuracy": 0.5, "per": {"f": [1, 2]}})
    write(b, "task/r/seed1", {"git": "y", "train_wall_s": 9.0, "checkpoint": "/b/ck.pt",
                              "accuracy": 0.5, "per": {"f": [1, 2]}})
    assert compare_runs.main([str(a), str(b), "--ignore-paths"]) == 0
    assert "0 result(s) differ" in capsys.readouterr().out
    assert compare_runs.main([str(a), str(b)]) == 1          # the paths count without the flag
    assert "checkpoint: '/a/ck.pt' != '/b/ck.pt'" in capsys.readouterr().out


def test_a_changed_value_or_a_missing_result_is_reported(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "u1", {"accuracy": 0.5, "per": {"f": [1, 2]}})
    write(b, "u1", {"accuracy": 0.5, "per": {"f": [1, 3]}})
    write(a, "u2", {"accuracy": 1.0})
    assert compare_runs.main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "u1/result.json: per.f[1]: 2 != 3" in out
    assert "u2/result.json: only in A" in out
    assert "2 result(s) differ" in out


def test_no_results_at_all_is_an_error(tmp_path):
    assert compare_runs.main([str(tmp_path / "x"), str(tmp_path / "y")]) == 2


def test_added_keys_are_listed_and_count_only_without_added_ok(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "u1", {"accuracy": 0.5})
    write(b, "u1", {"accuracy": 0.5, "accuracy_signature": "metric:seq_acc|version:1"})
    assert compare_runs.main([str(a), str(b)]) == 1
    assert "accuracy_signature: only in B" in capsys.readouterr().out
    assert compare_runs.main([str(a), str(b), "--added-ok"]) == 0
    out = capsys.readouterr().out
    assert "u1/result.json: accuracy_signature: added in B" in out
    assert "0 result(s) differ; 1 value(s) added in B" in out
    write(b, "u1", {"accuracy": 0.6, "accuracy_signature": "metric:seq_acc|version:1"})
    assert compare_runs.main([str(a), str(b), "--added-ok"]) == 1   # a changed value still counts
