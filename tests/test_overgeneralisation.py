"""Overgeneralisation tracking: the profile, checkpoint discovery, and a real run."""
import json
import subprocess
import sys

import pytest

from compsuite.eval.pcfgset import overgeneralisation as og
from compsuite.foundation.errors import DataError

from conftest import ROOT


def test_profile_golden():
    p = og.profile(["E1", "O1", "X1", "E1"], ["E1", "E2", "E3", "E1"], ["O0", "O1", "O3", "O1"])
    assert p == {"memorisation": 0.5, "overgeneralisation": 0.25, "neither": 0.25, "n": 4}
    # an output equal to both targets counts as memorised, not overgeneralised
    assert og.profile(["A1"], ["A1"], ["A1"])["overgeneralisation"] == 0.0
    with pytest.raises(ValueError):
        og.profile([], [], [])


def test_checkpoint_discovery_order_and_kinds(tmp_path):
    """A folder the user names is read by every backend (compsuite.toolkits'
    saved_checkpoints): one kind, the finest found, in training order."""
    from compsuite.toolkits import saved_checkpoints

    for name in ("checkpoint10.pt", "checkpoint2.pt", "checkpoint_best.pt", "checkpoint_last.pt"):
        (tmp_path / name).write_bytes(b"")
    assert [(k, n) for k, n, _ in og.listed(saved_checkpoints(tmp_path))] == [
        ("epoch", 2), ("epoch", 10)]
    onmt = tmp_path / "o"
    onmt.mkdir()
    for n in (1000, 200):
        (onmt / f"model_step_{n}.pt").write_bytes(b"")
    assert [n for _, n, _ in og.listed(saved_checkpoints(onmt))] == [200, 1000]
    both = tmp_path / "u"     # fairseq's update checkpoints before its epoch ones
    both.mkdir()
    for name in ("checkpoint1.pt", "checkpoint_1_50.pt", "checkpoint_2_100.pt"):
        (both / name).write_bytes(b"")
    assert [(c.kind, c.at) for c in saved_checkpoints(both)] == [("update", 50), ("update", 100)]
    empty = tmp_path / "e"
    empty.mkdir()
    (empty / "checkpoint_last.pt").write_bytes(b"")
    with pytest.raises(DataError, match="no per-epoch or per-step checkpoints"):
        saved_checkpoints(empty)
    with pytest.raises(DataError, match="no such checkpoint folder"):
        saved_checkpoints(tmp_path / "missing")


def test_track_with_real_checkpoints(tiny_runs, tiny_data, tmp_path):
    """Every checkpoint of the tiny OpenNMT-py run (steps 6 and 12), via the CLI."""
    from compsuite.data_prep.pcfgset import interpret
    from compsuite.data_prep.pcfgset.splits import exception_pairs
    from compsuite.data_prep.pcfgset import parse

    srcs = [s for s in (tiny_data.raw / "test.src").read_text().splitlines()
            if exception_pairs(parse(s))][:20]
    assert srcs
    prefix = tmp_path / "test_pcfg_ratio=0.1"
    (tmp_path / "test_pcfg_ratio=0.1_exception.src").write_text("\n".join(srcs) + "\n")
    (tmp_path / "test_pcfg_ratio=0.1_exception.tgt").write_text(
        "\n".join(interpret(s, exceptions=True) for s in srcs) + "\n")
    (tmp_path / "test_pcfg_ratio=0.1_original.tgt").write_text(
        "\n".join(interpret(s) for s in srcs) + "\n")
    _, run_dir, _ = tiny_runs["onmt"]
    r = subprocess.run([sys.executable, "-m", "compsuite.cli", "eval", "pcfgset", "overgeneralisation",
                        "--checkpoints", str(run_dir / "checkpoints"), "--exceptions", str(prefix),
                        "--json", "--plot", str(tmp_path / "t7.png")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert [row["at"] for row in out["profile"]] == [6, 12]
    for row in out["profile"]:
        assert row["n"] == len(srcs)
        assert abs(row["memorisation"] + row["overgeneralisation"] + row["neither"] - 1) < 1e-9
    assert out["peak_overgeneralisation"] == max(row["overgeneralisation"] for row in out["profile"])
    assert (tmp_path / "t7.png").read_bytes()[:4] == b"\x89PNG"
