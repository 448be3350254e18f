"""Readers and the scorer for the PCFG SET authors' released prediction files, on
hand-made files in the same formats (and on the real files when a copy is given)."""
import json
import os
from pathlib import Path

import pytest

from compsuite.eval.pcfgset.released import (read_localism_log, read_overgeneralisation_log,
                                             score_released, summarise)
from compsuite.foundation.errors import DataError

HEADER = "source\ttarget\tprediction\n"


def _tree(root: Path) -> Path:
    m = root / "lstms2s"
    (m / "pcfgset").mkdir(parents=True)
    (m / "pcfgset" / "run=1.txt").write_text(
        HEADER + "copy A1\tA1\tA1\nreverse A1 B1\tB1 A1\tA1 B1\necho C1\tC1 C1\tC1 C1\n")
    (m / "pcfgset" / "run=2.txt").write_text(HEADER + "copy A1\tA1\tA1\n")
    sub = m / "substitutivity" / "primitive"
    sub.mkdir(parents=True)
    (sub / "run=1.txt").write_text(HEADER + "repeat A1\tA1 A1\tA1 A1\nappend A1 , B1\tA1 B1\tA1\n")
    (sub / "run=1_synonym.txt").write_text(
        HEADER + "repeat_twin A1\tA1 A1\tA1 A1\nappend_twin A1 , B1\tA1 B1\tB1\n")
    (m / "localism").mkdir()
    (m / "localism" / "run=1.txt").write_text(
        "-----\nreverse A1 B1 -> B1 A1\necho B1 A1 -> B1 A1 A1\n"
        "echo reverse A1 B1 -> B1 A1 A1\nTrue\n"
        "-----\ncopy C1 -> C1\nshift C1 -> C1\nshift copy C1 -> D1\nFalse\n")
    (m / "overgeneralisation").mkdir()
    (m / "overgeneralisation" / "ratio=0.001_run=1.txt").write_text(
        "RUN 1\nsome header\n\nEpoch 1\nAdapted - Sequence Accuracy: 0.0\n"
        "Original - Sequence Accuracy: 0.25\n\nEpoch 2\nAdapted - Sequence Accuracy 0.5\n"
        "Original - Sequence Accuracy 0.5\n\nEpoch 3\nAdapted - Sequence Accuracy: 1.0\n"
        "Original - Sequence Accuracy: 0.0\n")
    return root


def test_score_released_tree(tmp_path):
    rows = score_released(_tree(tmp_path))
    by = {(r["test"], r["run"]): r for r in rows}
    assert by[("task_accuracy", 1)]["value"] == pytest.approx(2 / 3)
    sub = by[("substitutivity_primitive", 1)]
    assert sub["value"] == 0.5 and sub["details"]["consistent_correct"] == 0.5
    loc = by[("localism", 1)]
    assert loc["value"] == 0.5 and loc["flags_agree"] == 1.0 and loc["n"] == 2
    og = by[("overgeneralisation@0.001", 1)]
    assert og["value"] == 0.5 and og["peak_at"] == {"kind": "epoch", "at": 2}
    (task,) = [s for s in summarise(rows) if s["test"] == "task_accuracy"]
    assert task["runs"] == 2 and task["mean"] == pytest.approx((2 / 3 + 1) / 2)


def test_overgeneralisation_log_profile(tmp_path):
    _tree(tmp_path)
    res = read_overgeneralisation_log(tmp_path / "lstms2s/overgeneralisation/ratio=0.001_run=1.txt")
    assert [r["at"] for r in res["profile"]] == [1, 2, 3]
    assert res["profile"][0]["neither"] == 0.75 and res["final"]["memorisation"] == 1.0


@pytest.mark.parametrize("text,msg", [
    ("-----\ncopy A1 -> A1\n", r"run=1.txt:3: a localism block must end with True or False"),
    ("-----\ncopy A1 A1\nTrue\n", r"run=1.txt:2: expected 'input -> output'"),
])
def test_malformed_localism_files_name_the_line(tmp_path, text, msg):
    f = tmp_path / "run=1.txt"
    f.write_text(text)
    with pytest.raises(DataError, match=msg):
        read_localism_log(f)


def test_malformed_overgeneralisation_log(tmp_path):
    f = tmp_path / "ratio=0.1_run=1.txt"
    f.write_text("Epoch 1\nAdapted - Sequence Accuracy: 0.1\n")
    with pytest.raises(DataError, match="epoch 1 lacks an Adapted or Original line"):
        read_overgeneralisation_log(f)
    f.write_text("Adapted - Sequence Accuracy: 0.1\n")
    with pytest.raises(DataError, match=r":1: an accuracy line before any 'Epoch N' line"):
        read_overgeneralisation_log(f)


def test_cli_eval_released(tmp_path, capsys):
    from compsuite.cli import main

    assert main(["eval", "pcfgset", "released", str(_tree(tmp_path)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {s["test"] for s in out["summary"]} == {
        "task_accuracy", "substitutivity_primitive", "localism", "overgeneralisation@0.001"}
    assert main(["eval", "pcfgset", "released", str(tmp_path / "nope")]) == 1
    assert "no such folder of released predictions" in capsys.readouterr().err


RELEASED = Path(os.environ.get("COMPSUITE_RELEASED_PREDICTIONS", "../shared/reference/pcfgset/"
                                                                 "model_predictions"))


@pytest.mark.skipif(not RELEASED.is_dir(), reason=f"no released predictions at {RELEASED} "
                    "(set COMPSUITE_RELEASED_PREDICTIONS to a copy of model_predictions/)")
def test_real_released_files():
    rows = score_released(RELEASED)
    assert all(0 <= r["value"] <= 1 for r in rows)
    for r in rows:   # our consistency agrees with the authors' own True/False per sample
        if r["test"] == "localism":
            assert r["flags_agree"] == 1.0, r["files"]
