"""The localism driver: batching by level, scores, traces, and both toolkits."""
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from compsuite.data_prep.pcfgset import SMALL, interpret
from compsuite.data_prep.pcfgset.splits import localism as make_localism
from compsuite.eval.pcfgset import localism
from compsuite.models.protocol import Model, ModelBase
from compsuite.foundation.errors import DataError

from conftest import ROOT, reference_path


class Oracle(ModelBase):
    """A perfect 'model': the interpreter.  ``wrong_above`` makes it wrong on inputs
    longer than that many tokens (to give the scores something to count)."""
    name = "oracle"
    capabilities = frozenset({"translate"})

    def __init__(self, wrong_above=None):
        self.calls = self.batches = 0
        self.wrong_above = wrong_above

    def translate(self, sources):
        self.calls += 1
        self.batches += 1
        return [interpret(s) + (" X1" if self.wrong_above and len(s.split()) > self.wrong_above
                                else "") for s in sources]


@pytest.fixture(scope="module")
def unrolled(tmp_path_factory):
    out = tmp_path_factory.mktemp("localism")
    make_localism(out, replace(SMALL, n_pairs=2000), seed=2, n_train=1700, n_valid=100,
                  n_test=200, n_samples=200)
    return out / "unrolled_test.tsv"


def test_oracle_is_consistent_and_calls_grow_with_depth(unrolled):
    samples = localism.read_unrolled(unrolled)
    oracle = Oracle()
    assert isinstance(oracle, Model)
    res = localism.run(oracle, samples)
    depth = max(max(s.levels) for s in samples)
    assert oracle.calls == 1 + depth <= 1 + SMALL.max_depth
    assert res["n"] == 200 and res["consistency"]["consistency"] == 1.0
    assert res["accuracy_original"] == res["accuracy_unrolled"] == 1.0
    assert res["accuracy_signature"].startswith("metric:seq_acc|")
    assert res["traces"][0]["steps"][-1]["output"] == res["traces"][0]["target"]


def test_batched_equals_unbatched(unrolled):
    samples = localism.read_unrolled(unrolled)
    a, b = Oracle(wrong_above=5), Oracle(wrong_above=5)
    batched, single = localism.run(a, samples), localism.run_unbatched(b, samples)
    assert batched["consistency"] == single["consistency"]
    assert batched["traces"] == single["traces"]
    assert b.calls == len(samples) + sum(len(s.steps) for s in samples) > a.calls
    assert batched["accuracy_original"] < 1.0          # long inputs get an extra X1
    assert batched["consistency"]["consistency"] < 1.0


def test_released_unrolled_file_with_the_oracle():
    samples = localism.read_unrolled(reference_path("pcfgset", "localism", "unrolled_test.tsv"))
    oracle = Oracle()
    res = localism.run(oracle, samples[:500])
    assert res["consistency"]["consistency"] == 1.0 and oracle.calls <= 18


@pytest.mark.parametrize("text,msg", [
    ("unrolled\tcopy A1 \t*1\n", "without their 'original'"),
    ("original\tcopy A1\tA1\n", "'original' without unrolled"),
    ("unrolled\tcopy *2\t*1\noriginal\tcopy A1\tA1\n", "does not precede"),
    ("unrolled\tcopy A1\n", "expected label"),
    ("other\tcopy A1\tA1\n", "unknown label"),
])
def test_malformed_unrolled_files(tmp_path, text, msg):
    (tmp_path / "u.tsv").write_text(text)
    with pytest.raises(DataError, match=msg):
        localism.read_unrolled(tmp_path / "u.tsv")


@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_localism_cli_with_real_models(toolkit, tiny_runs, tiny_data, tmp_path):
    """Both backends through `compsuite eval pcfgset localism` on tiny trained models."""
    _, run_dir, info = tiny_runs[toolkit]
    rows = []
    from compsuite.data_prep.pcfgset import parse
    from compsuite.data_prep.pcfgset.splits import unroll
    for src in (tiny_data.raw / "test.src").read_text().splitlines()[:40]:
        rows += [f"unrolled\t{s}\t{t}" for s, t in unroll(parse(src))]
        rows.append(f"original\t{src}\t{interpret(src)}")
    (tmp_path / "u.tsv").write_text("\n".join(rows) + "\n")
    cmd = [sys.executable, "-m", "compsuite.cli", "eval", "pcfgset", "localism", "--checkpoint",
           info["checkpoint"], "--unrolled", str(tmp_path / "u.tsv"), "--json",
           "--traces", str(tmp_path / "t.jsonl")]
    if toolkit == "fairseq":
        cmd += ["--data", str(tiny_data.folder("fairseq"))]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    depth = max(max(s.levels) for s in localism.read_unrolled(tmp_path / "u.tsv"))
    assert out["n"] == 40 and out["model_calls"] == 1 + depth
    assert 0.0 <= out["consistency"]["consistency"] <= 1.0
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 40


def test_not_a_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "u.tsv").write_text("unrolled\tcopy A1 \tA1\noriginal\tcopy A1\tA1\n")
    (tmp_path / "model.pt").write_text("not a checkpoint\n")
    r = subprocess.run([sys.executable, "-m", "compsuite.cli", "eval", "pcfgset", "localism", "--checkpoint",
                        str(tmp_path / "model.pt"), "--unrolled", str(tmp_path / "u.tsv")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1 and "model.pt: not a checkpoint" in r.stderr
    assert "expected a fairseq or OpenNMT-py checkpoint" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_fairseq_checkpoint_without_its_data_is_a_clear_error(tiny_runs):
    _, _, info = tiny_runs["fairseq"]
    r = subprocess.run([sys.executable, "-m", "compsuite.cli", "eval", "pcfgset", "embeddings",
                        "--checkpoint", info["checkpoint"]], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 1 and "a fairseq checkpoint needs --data" in r.stderr
    assert "Traceback" not in r.stderr
