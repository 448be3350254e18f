"""compsuite run end to end on a tiny profile: data, training, predictions, scores,
report; a second run skips every finished step; an interrupted run resumes."""
import json

import pytest
import yaml

from compsuite.eval.reports.pcfgset import build_report
from compsuite.pipeline import collect_results, run_profile
from compsuite.registry import load_study

from conftest import TINY_ONMT


def _study(tmp_path):
    spec = {
        "study": "pcfgset", "title": "PCFG SET task accuracy", "config_version": 1,
        "datasets": {"small": {"generator": "pcfgset", "config": "small", "label": "tiny test"}},
        "architectures": {"lstms2s": {"paper_name": "LSTMS2S"}},
        "generation": {"beam": 1, "batch_size": 256},
        "runs": {"lstms2s-onmt": {"architecture": "lstms2s", "toolkit": "onmt", "paper_setup": True,
                                  "config": "onmt_configs/pcfgset/lstm.yaml",
                                  "profiles": {"tiny": TINY_ONMT}}},
        "profiles": {"tiny": {"dataset": "small", "seeds": [1], "runs": ["lstms2s-onmt"]}},
    }
    path = tmp_path / "pcfgset.yaml"
    path.write_text(yaml.safe_dump(spec))
    return load_study(path)


def test_run_skip_resume_report(tmp_path):
    study = _study(tmp_path)
    roots = dict(data_root=tmp_path / "DATA", runs_root=tmp_path / "runs", show=False)
    first = run_profile(study, "tiny", **roots)
    assert len(first) == 1 and first[0]["n"] == 2353 and first[0]["git"] is not None
    run_dir = tmp_path / "runs" / "pcfgset" / "tiny" / "lstms2s-onmt" / "seed1"
    stamps = {p.name: p.stat().st_mtime_ns for p in run_dir.iterdir() if p.is_file()}
    data_manifest = tmp_path / "DATA" / "pcfgset" / "small" / "seed1" / "raw" / "manifest.json"
    data_stamp = data_manifest.stat().st_mtime_ns

    again = run_profile(study, "tiny", **roots)            # everything skipped
    assert again == first
    assert {p.name: p.stat().st_mtime_ns for p in run_dir.iterdir() if p.is_file()} == stamps
    assert data_manifest.stat().st_mtime_ns == data_stamp

    (run_dir / "result-test.json").unlink()               # interrupted before scoring
    (run_dir / "pred-test.txt").unlink()
    resumed = run_profile(study, "tiny", **roots)
    assert resumed[0]["accuracy"] == first[0]["accuracy"]
    assert (run_dir / "train.log").stat().st_mtime_ns == stamps["train.log"]  # not retrained

    results = collect_results(study, "tiny", tmp_path / "runs")
    report = build_report(results, tmp_path / "results", "tiny", study.title, study.architectures)
    table = (tmp_path / "results" / "table.md").read_text()
    assert "| LSTMS2S" in table and "0.79" in table and "tiny test" in table
    assert report["summary"][0]["paper_accuracy"] == 0.79
    assert (tmp_path / "results" / "accuracy_by_structure.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "results" / "results.json").read_text())["runs"][0]["seed"] == 1


def test_report_with_seeds_has_mean_std_and_welch(tmp_path):
    """Three seeds of two models: mean ± std per model and a Welch t-test between them."""
    study = _study(tmp_path)
    base = {"study": "pcfgset", "profile": "tiny", "toolkit": "onmt", "paper_setup": True,
            "dataset": "small", "dataset_label": "tiny test", "n": 100,
            "signature": "metric:seq_acc", "breakdown": {"depth": {"1": {"accuracy": 1.0, "n": 9}}}}
    study.architectures["transformer"] = {"paper_name": "Transformer"}
    results = [{**base, "architecture": "lstms2s", "seed": s, "accuracy": a}
               for s, a in ((1, 0.5), (2, 0.6), (3, 0.7))]
    results += [{**base, "architecture": "transformer", "seed": s, "accuracy": a}
                for s, a in ((1, 0.8), (2, 0.9), (3, 1.0))]
    report = build_report(results, tmp_path / "r", "tiny", study.title, study.architectures)
    lstm = next(x for x in report["summary"] if x["architecture"] == "lstms2s")
    assert lstm["accuracy_mean"] == pytest.approx(0.6) and lstm["accuracy_std"] == pytest.approx(0.1)
    (test,) = report["significance"]
    assert test["t"] == pytest.approx(-3.6742, abs=1e-4) and test["p"] == pytest.approx(0.0213, abs=1e-3)
    table = (tmp_path / "r" / "table.md").read_text()
    assert "0.60 ± 0.10" in table and "Welch" in table


@pytest.mark.parametrize("test", ["systematicity", "substitutivity_primitive", "localism",
                                  "overgeneralisation", "per_function",
                                  "increasing_string_length"])
def test_run_each_kind_of_test(tmp_path, test):
    """A tiny OpenNMT-py model through each kind of test: split, data, training (or the
    task model), the test's evaluator via the translator protocol, skip on re-run, report."""
    from compsuite.eval.reports.pcfgset import build_test_report
    from compsuite.pipeline import run_test
    from compsuite.registry import get_study

    study = _study(tmp_path)
    study.tests = {test: get_study("pcfgset").tests[test]}
    roots = dict(data_root=tmp_path / "DATA", runs_root=tmp_path / "runs", show=False)
    (result,) = run_test(study, test, "tiny", **roots)
    kind = study.tests[test]["evaluation"]
    assert result["evaluation"] == kind and result["test"] == test
    test_dir = tmp_path / "runs" / "pcfgset" / "tiny" / test / "lstms2s-onmt" / "seed1"
    task_dir = tmp_path / "runs" / "pcfgset" / "tiny" / "lstms2s-onmt" / "seed1"
    if result["model"] == "base":       # the task model, trained once, not a model of its own
        assert result["checkpoint"] == json.loads((task_dir / "train.json").read_text())[
            "checkpoint"]
        assert not (test_dir / "checkpoints").exists()
    else:
        assert str(test_dir) in result["checkpoint"]
    if kind == "accuracy":
        assert result["n"] == 2353 and "category" in result["breakdown"]
        assert result["eos_problem"]["n_wrong"] == 2353 - result["correct"]
        # compare_base: the task model on the same inputs (Table 4)
        assert result["task_model"]["n"] == 2353 and str(task_dir) in result["task_model"][
            "checkpoint"]
    elif kind == "consistency":
        assert result["consistency"]["n"] == 2353
        assert set(result["consistency"]["breakdown"]) <= {"append", "repeat", "remove_second",
                                                           "swap_first_last"}
        assert set(result["embedding_distances"]["distances"]) == {
            "append", "repeat", "remove_second", "swap_first_last"}
    elif kind == "localism":
        assert result["n"] == 5000 and result["model_calls"] <= 1 + 3
    elif kind == "per_function":
        from compsuite.data_prep.pcfgset.grammar import FUNCTIONS

        assert set(result["per_function"]) == set(FUNCTIONS) and result["n_per_function"] == 1176
    elif kind == "by_length":
        assert sorted(map(int, result["breakdown"]["length"])) == list(range(2, 21))
        assert result["n"] == 10 * 19 * 53
    else:
        assert [r["at"] for r in result["profile"]] == [6, 12]   # every checkpoint kept
    assert run_test(study, test, "tiny", **roots) == [result]     # skipped the second time
    report = build_test_report([result], tmp_path / "results", test, study.architectures)
    assert (tmp_path / "results" / f"{test}.md").read_text().startswith(f"# PCFG SET {test}")
    assert report["summary"][0]["seeds"] == 1
    if kind == "per_function":
        assert (tmp_path / "results" / "per_function.png").read_bytes()[:4] == b"\x89PNG"


def test_test_on_the_task_model_refuses_another_corpus(tmp_path):
    """A base-model test whose samples would not come from the task model's training
    corpus is an error naming both files."""
    from compsuite.pipeline import check_same_corpus

    a, b = tmp_path / "a", tmp_path / "b"
    for d, text in ((a, "copy A1\n"), (b, "copy B1\n")):
        d.mkdir()
        (d / "train.src").write_text(text)
        (d / "train.tgt").write_text("A1\n")
    with pytest.raises(RuntimeError, match="a/train.src differs from the task corpus .*b/train.src"):
        check_same_corpus(a, b, "localism")
    check_same_corpus(a, a, "localism")


def test_overgeneralisation_training_options_merge_per_profile():
    from compsuite.pipeline import _train_extra
    from compsuite.registry import get_study

    spec = get_study("pcfgset").tests["overgeneralisation"]
    assert _train_extra(spec, "quick", "onmt") == {"keep_checkpoint": -1,
                                                   "save_checkpoint_steps": 250}
    assert _train_extra(spec, "tiny", "onmt") == {"keep_checkpoint": -1}
    assert _train_extra(spec, "quick", "fairseq") is None


def test_study_report_has_every_table_and_figure(tmp_path):
    """Table 3 (every row beside the paper's), Tables 4-6 and Figures 7-10 from stored
    results of three architectures and two seeds, with Welch tests per row."""
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS
    from compsuite.eval.reports.pcfgset import build_study_report
    from compsuite.registry import get_study

    study = get_study("pcfgset")
    runs = {"lstms2s": "lstms2s-onmt", "convs2s": "convs2s-fairseq",
            "transformer": "transformer-onmt"}
    tk = {"lstms2s": "onmt", "convs2s": "fairseq", "transformer": "onmt"}
    label = "tiny test"
    task, tests = [], {t: [] for t in study.tests}
    cons = {"consistency": 0.5, "consistent_correct": 0.4, "consistent_incorrect": 0.1,
            "consistency_incorrect": 0.2, "n": 10, "signature": "metric:consistency",
            "breakdown": {"repeat": {"consistency": 0.5, "n": 10}}}
    for i, arch in enumerate(runs):
        for seed in (1, 2):
            v = 0.1 * (i + 1) + 0.01 * seed
            common = {"architecture": arch, "toolkit": tk[arch], "run": runs[arch], "seed": seed,
                      "dataset_label": label}
            task.append({**common, "paper_setup": True, "accuracy": v, "n": 10,
                         "signature": "metric:seq_acc", "dataset": "small",
                         "breakdown": {"depth": {"1": {"accuracy": v, "n": 10}}}})
            eos = {"contained_share": 0.5}
            for t in ("systematicity", "productivity"):
                tests[t].append({**common, "evaluation": "accuracy", "accuracy": v, "n": 10,
                                 "eos_problem": eos, "task_model": {"accuracy": v + 0.1,
                                                                    "eos_problem": eos}})
            for t in ("substitutivity_equally_distributed", "substitutivity_primitive"):
                tests[t].append({**common, "evaluation": "consistency", "consistency": cons,
                                 "embedding_distances": {"distances": {"repeat": {
                                     "to_synonym": 0.3, "to_other_functions": 0.9}}}})
            tests["localism"].append({**common, "evaluation": "localism", "consistency": cons})
            tests["overgeneralisation"].append(
                {**common, "evaluation": "overgeneralisation", "peak_overgeneralisation": v,
                 "profile": [{"kind": "epoch", "at": e, "memorisation": 0.1 * e,
                              "overgeneralisation": v / e, "neither": 0.0} for e in (1, 2)]})
            tests["per_function"].append({**common, "evaluation": "per_function", "accuracy": v,
                                          "per_function": {f: v for f in FUNCTIONS}})
            tests["increasing_string_length"].append(
                {**common, "evaluation": "by_length", "accuracy": v,
                 "breakdown": {"length": {str(n): {"accuracy": v, "n": 53} for n in (2, 3)}}})
    rep = build_study_report(study, "paper", task, tests, tmp_path)
    md = (tmp_path / "report.md").read_text()
    # Table 3: our value beside the paper's for every row, each architecture
    assert rep["table3"]["systematicity"]["transformer"]["paper"] == 0.72
    assert rep["table3"]["localism"]["lstms2s"]["mean"] == pytest.approx(0.5)
    assert rep["table3"]["task_accuracy"]["convs2s"]["mean"] == pytest.approx(0.215)
    assert "| systematicity " in md and "0.12 ± 0.01" in md and "0.72" in md
    assert len(rep["table3"]) == 7
    assert {s["row"] for s in rep["significance"]} >= {"task accuracy", "systematicity"}
    for section in ("Table 4 analogue", "Table 5 analogue", "Table 6 analogue", "Figure 7",
                    "Figure 8", "Figure 10", "Overgeneralisation over training"):
        assert section in md, section
    for png in ["accuracy_by_structure.png", "per_function.png", "increasing_length.png",
                "overgeneralisation_lstms2s-onmt_seed1.png"]:
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG", png
    assert json.loads((tmp_path / "report.json").read_text())["table3"] == rep["table3"]
    assert (tmp_path / "systematicity.md").is_file() and (tmp_path / "table.md").is_file()


def test_task_model_is_read_with_its_own_dictionaries(tmp_path, monkeypatch):
    """compare_base scores the task model on the test's inputs: a fairseq task model
    must be loaded with the task corpus's dictionaries, not the test split's (they
    number the symbols differently; the first full run scored ConvS2S 0.00 that way)."""
    import compsuite.pipeline as pl
    from compsuite.registry import get_study

    loaded = []
    real = pl._translator_loader

    def spy(dictionary_dir, generation):
        load = real(dictionary_dir, generation)
        return lambda ck: (loaded.append((str(ck), str(dictionary_dir))), load(ck))[1]

    monkeypatch.setattr(pl, "_translator_loader", spy)
    study = _study(tmp_path)
    study.tests = {"productivity": get_study("pcfgset").tests["productivity"]}
    roots = dict(data_root=tmp_path / "DATA", runs_root=tmp_path / "runs", show=False)
    (result,) = pl.run_test(study, "productivity", "tiny", **roots)
    task_ck = result["task_model"]["checkpoint"]
    test_ck = result["checkpoint"]
    by_ck = dict(loaded)
    assert by_ck[task_ck] == str(tmp_path / "DATA/pcfgset/small/seed1/fairseq-bin")
    assert by_ck[test_ck] == str(tmp_path / "DATA/pcfgset/small/productivity/seed1/fairseq-bin")
