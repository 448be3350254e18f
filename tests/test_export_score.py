"""compsuite export / score (compsuite/export.py, compsuite/models/recording.py): what is
exported, that it is the same bytes twice, and the errors of a user's answer files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from compsuite.cli import main
from compsuite.foundation.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    out = root / "inputs"
    assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(out), "--data-root",
                 str(root / "DATA"), "--quiet"]) == 0
    return root, out


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_export_lists_every_file_with_what_it_feeds(export):
    root, out = export
    m = json.loads((out / "manifest.json").read_text())
    assert m["study"] == "ctlpp" and m["profile"] == "tiny"
    units = {u["unit"]: u for u in m["units"]}
    a = units["A/export/seed1"]
    assert "representations" in a["feeds"] and Path(a["data"]).is_dir()
    names = {Path(f["inputs"]).name: f for f in a["files"]}
    assert set(names) == {"test-iid.src", "test-ood.src", "compatibility.src"}
    raw = Path(a["data"])
    assert (out / names["test-ood.src"]["inputs"]).read_text() == (raw / "test_ood.src").read_text()
    ids = (out / names["test-ood.src"]["ids"]).read_text().splitlines()
    assert ids[0] == "A/export/seed1/test-ood:1" and len(ids) == names["test-ood.src"]["n"]
    # the representation analysis needs the model itself: listed, not exported
    assert a["analyses_needing_the_model"] and "command protocol" in \
        a["analyses_needing_the_model"][0]
    assert "not from files: representations" in (out / "README.md").read_text()


def test_the_export_is_the_same_bytes_twice(export, tmp_path):
    root, out = export
    again = tmp_path / "again"
    assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(again), "--data-root",
                 str(root / "DATA"), "--quiet"]) == 0
    assert files(again) == files(out)


def test_export_refuses_a_folder_that_is_not_empty(export, capsys):
    root, out = export
    before = files(out)
    assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(out), "--data-root",
                 str(root / "DATA"), "--quiet"]) == 1
    assert capsys.readouterr().err == (f"compsuite: error: {out}: not empty (export into a "
                                       "new folder)\n")
    assert files(out) == before


def test_export_refuses_a_file(export, tmp_path, capsys):
    root, _ = export
    out = tmp_path / "inputs.txt"
    out.write_text("mine\n")
    assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(out), "--data-root",
                 str(root / "DATA"), "--quiet"]) == 1
    assert capsys.readouterr().err == (f"compsuite: error: {out}: a file, not a folder "
                                       "(export into a new folder)\n")
    assert out.read_text() == "mine\n"
    # a folder inside the file: the same (before: a FileExistsError traceback)
    assert main(["export", "ctlpp", "--profile", "tiny", "--out", str(out / "inputs"),
                 "--data-root", str(root / "DATA"), "--quiet"]) == 1
    assert capsys.readouterr().err == (f"compsuite: error: {out}: a file, not a folder "
                                       "(export into a new folder)\n")


def answer_all(out: Path, hyps: Path, answer="s1") -> None:
    m = json.loads((out / "manifest.json").read_text())
    for u in m["units"]:
        for f in u["files"]:
            p = hyps / f["answers"]
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text((answer + "\n") * f["n"])


def score(root: Path, out: Path, hyps: Path, profile: str = "tiny") -> int:
    return main(["score", "ctlpp", "--profile", profile, "--from", str(out), "--hyps",
                 str(hyps), "--data-root", str(root / "DATA"), "--runs-root",
                 str(root / "runs"), "--results-root", str(root / "results"), "--quiet"])


def test_score_errors_name_the_answer_file(export, tmp_path, capsys):
    root, out = export
    hyps = tmp_path / "hyps"
    answer_all(out, hyps)
    short = hyps / "A/export/seed1/test-ood.hyp"
    short.write_text("s1\n")
    assert score(root, out, hyps) == 1
    err = capsys.readouterr().err
    assert f"{short}: 1 lines, but" in err and "test-ood.src has 40 inputs" in err
    short.unlink()
    assert score(root, out, hyps) == 1
    assert f"{short}: no such file" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="an export of ctlpp --profile tiny, not of ctlpp "
                                          "--profile quick"):
        from compsuite.export import read_manifest
        read_manifest(out, "ctlpp", "quick")
    with pytest.raises(DataError, match="no such folder"):
        from compsuite.export import score as score_fn
        from compsuite.registry import get_study
        score_fn(get_study("ctlpp"), "tiny", out, tmp_path / "none", runs_root=tmp_path,
                 results_root=tmp_path, data_root=root / "DATA", show=False)


def test_score_reads_the_answers_again_each_time(export, tmp_path):
    root, out = export
    hyps = tmp_path / "hyps"
    answer_all(out, hyps, "s1")
    assert score(root, out, hyps) == 0
    res = root / "runs/scored/ctlpp/tiny/A/system/seed1/result.json"
    first = json.loads(res.read_text())["test_iid"]["accuracy"]
    answer_all(out, hyps, "nothing-right")
    assert score(root, out, hyps) == 0
    assert json.loads(res.read_text())["test_iid"]["accuracy"] == 0.0 <= first
    assert (root / "results/ctlpp/tiny-system/report.md").is_file()
    # timings.jsonl holds the steps of compsuite run: score records none
    assert not list((root / "runs").rglob("timings.jsonl"))
