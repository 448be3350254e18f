"""Sequence accuracy on hand-made cases, and every input format with its errors."""

import pytest

from compsuite.eval.metrics.accuracy import accuracy_by, matches, sequence_accuracy
from compsuite.toolkits.fairseq.predictions import read_fairseq_generate
from compsuite.models.predictions import read_plain
from compsuite.eval.readers.predictions import read_tsv
from compsuite.foundation.errors import DataError


@pytest.mark.parametrize("hyps,refs,acc", [
    (["A1 B1"], ["A1 B1"], 1.0),                          # all correct
    (["A1 B1", "C1"], ["A1 B1", "D1"], 0.5),
    (["A1  B1 "], ["A1 B1"], 1.0),                        # whitespace does not count
    ([""], ["A1"], 0.0),                                  # empty hypothesis
    (["A1 B1"], ["A1 B1 B1"], 0.0),                       # prefix is wrong
    (["a1"], ["A1"], 0.0),                                # case counts
])
def test_sequence_accuracy_golden(hyps, refs, acc):
    res = sequence_accuracy(hyps, refs)
    assert res.accuracy == acc and res.n == len(hyps)
    assert "metric:seq_acc" in res.signature and "tok:whitespace" in res.signature


def test_accuracy_errors_and_breakdown():
    with pytest.raises(ValueError):
        sequence_accuracy(["A1"], ["A1", "B1"])
    with pytest.raises(ValueError):
        sequence_accuracy([], [])
    by = accuracy_by(["x", "y", "z"], ["x", "n", "z"], [2, 1, 2])
    assert list(by) == [1, 2]
    assert by[1] == {"accuracy": 0.0, "n": 1, "correct": 0}
    assert by[2]["accuracy"] == 1.0
    assert matches(["a"], ["a"]) == [True]


def write(path, text):
    path.write_text(text)
    return path


def test_plain_files(tmp_path):
    p = read_plain(write(tmp_path / "h", "A1\nB1\n"), write(tmp_path / "r", "A1\nC1\n"))
    assert sequence_accuracy(p.hypotheses, p.references).accuracy == 0.5


def test_plain_mismatched_counts_name_both_files(tmp_path):
    with pytest.raises(DataError, match=r"h has 2.*r has 1"):
        read_plain(write(tmp_path / "h", "A1\nB1\n"), write(tmp_path / "r", "A1\n"))


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(DataError, match="empty"):
        read_plain(write(tmp_path / "h", ""), write(tmp_path / "r", "A1\n"))
    with pytest.raises(DataError, match="no such file"):
        read_plain(tmp_path / "nope", write(tmp_path / "r", "A1\n"))


def test_tsv(tmp_path):
    f = write(tmp_path / "p.tsv", "source\ttarget\tprediction\ncopy A1\tA1\tA1\nrepeat B1\tB1 B1\tB1\n")
    p = read_tsv(f)
    assert p.sources == ["copy A1", "repeat B1"]
    assert sequence_accuracy(p.hypotheses, p.references).accuracy == 0.5


@pytest.mark.parametrize("text,msg", [
    ("copy A1\tA1\tA1\n", "line 1 must be the header"),
    ("source\ttarget\tprediction\n", "header only"),
    ("source\ttarget\tprediction\ncopy A1\tA1\n", "line 2 has 2 tab-separated fields"),
    ("", "empty"),
])
def test_tsv_errors(tmp_path, text, msg):
    with pytest.raises(DataError, match=msg):
        read_tsv(write(tmp_path / "p.tsv", text))


GEN = """2026-01-01 | INFO | fairseq_cli.generate | loading
S-1\tcopy B1
T-1\tB1
H-1\t-0.1\tB1
D-1\t-0.1\tB1
P-1\t-0.1 -0.1
S-0\trepeat A1
T-0\tA1 A1
H-0\t-0.2\tA1
D-0\t-0.2\tA1
Generate test with beam=1: BLEU4 = 0.00
"""


def test_fairseq_generate_output_is_resorted(tmp_path):
    p = read_fairseq_generate(write(tmp_path / "gen.txt", GEN))
    assert p.sources == ["repeat A1", "copy B1"]
    assert p.references == ["A1 A1", "B1"] and p.hypotheses == ["A1", "B1"]


@pytest.mark.parametrize("text,msg", [
    ("nothing here\n", "no H- lines"),
    ("S-0\tcopy A1\nH-0\t-0.1\tA1\n", "no T- lines"),
    ("T-0\tA1\nT-1\tB1\nH-0\t-0.1\tA1\n", "truncated"),
    ("T-0\tA1\nH-0\tA1\n", "without score"),
    ("T-1\tA1\nH-1\t-0.1\tA1\n", "id 0 is missing"),
])
def test_fairseq_generate_errors(tmp_path, text, msg):
    with pytest.raises(DataError, match=msg):
        read_fairseq_generate(write(tmp_path / "gen.txt", text))


def test_ctlpp_outputs_of_any_system_scored_by_composition_length(tmp_path, capsys):
    """`compsuite eval accuracy --breakdown ctlpp`: CTL++ predictions from a file, by
    the number of functions composed (the run's `by_length`)."""
    import json

    from compsuite.cli import main
    from compsuite.eval.ctlpp.analyses import accuracy_by_length

    src = ["q j 4", "B F 0", "C n y F b b 6", "a 1"]
    ref, hyp = ["5", "6", "0", "2"], ["5", "7", "0", "3"]
    for name, lines in (("src", src), ("ref", ref), ("hyp", hyp)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    rc = main(["eval", "accuracy", "--hyp", str(tmp_path / "hyp"), "--ref", str(tmp_path / "ref"),
               "--src", str(tmp_path / "src"), "--breakdown", "ctlpp", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["accuracy"] == 0.5
    by = {str(k): (v["accuracy"], v["n"]) for k, v in out["breakdown"]["length"].items()}
    assert by == {"1": (0.0, 1), "2": (0.5, 2), "6": (1.0, 1)}
    assert {k: (v["accuracy"], v["n"]) for k, v in
            accuracy_by_length(src, hyp, ref)["by_length"].items()} == by
