"""NLI scores on hand-made labels: accuracy, CS_λ rows, adversary shares, and reading
any system's ``pairID<TAB>label`` file (errors name the file and line)."""
import pytest

from compsuite.eval.nli import scores as nli
from compsuite.foundation.errors import DataError


def test_accuracy_and_cs_rows():
    gold = ["entailment", "neutral", "contradiction", "entailment"]
    pred = ["entailment", "entailment", "contradiction", "neutral"]
    assert nli.accuracy(gold, pred) == 0.5
    row = nli.score_dev(gold, pred, lms_values=[0.2, 0.9, 0.55, 0.7], lambdas=(0.5, 0.7))
    assert row["whole"] == 50.0 and row["n"] == 4
    # CS_0.5 = pairs 1, 2, 3 (one right); CS_0.7 = pairs 1, 3 (none right): >= λ
    assert row["cs"] == {"0.5": {"accuracy": pytest.approx(100 / 3), "n": 3},
                         "0.7": {"accuracy": 0.0, "n": 2}}
    assert row["signature"].startswith("metric:nli-accuracy|") and "lambdas:0.5,0.7" in row["signature"]
    assert nli.score_dev(gold, pred)["cs"] == {}
    with pytest.raises(DataError, match="3 LMS values for 4 pairs"):
        nli.score_dev(gold, pred, lms_values=[0.1, 0.2, 0.3])
    with pytest.raises(DataError, match="4 gold labels but 3 predictions"):
        nli.accuracy(gold, pred[:3])


def test_adversary_shares_in_the_tables_order():
    pred = ["entailment"] * 6 + ["contradiction"] * 3 + ["neutral"]
    out = nli.score_adversary(pred, ["contradiction"] * 10)
    assert list(out["shares"]) == ["entailment", "contradiction", "neutral"]
    assert out["shares"] == {"entailment": 60.0, "contradiction": 30.0, "neutral": 10.0}
    assert out["accuracy"] == 30.0 and out["n"] == 10


def test_any_systems_file(tmp_path):
    f = tmp_path / "preds.tsv"
    f.write_text("p1\tentailment\np2\tC\n\np3\tNeutral\n")
    preds = nli.read_predictions(f)
    assert preds == {"p1": "entailment", "p2": "contradiction", "p3": "neutral"}
    assert nli.align(["p3", "p1", "p2"], preds) == ["neutral", "entailment", "contradiction"]
    with pytest.raises(DataError, match=r"no prediction for 2 of 5 pairs \(first: p4, p5\)"):
        nli.align(["p1", "p2", "p3", "p4", "p5"], preds, "preds.tsv")
    # a prediction for a pair that is not in the set is an error naming its line
    with pytest.raises(DataError, match=r"^preds\.tsv:2: pair 'p2' is not among the 2 pairs"):
        nli.align(["p3", "p1"], preds, "preds.tsv")
    for text, msg in [("p1\tentailment\np1\tneutral\n", r"preds\.tsv:2: pair 'p1' predicted twice"),
                      ("p1 entailment\n", r"preds\.tsv:1: expected 'pairID<TAB>label'"),
                      ("p1\tyes\n", r"preds\.tsv:1: unknown label 'yes'"),
                      ("\n", "no predictions")]:
        f.write_text(text)
        with pytest.raises(DataError, match=msg):
            nli.read_predictions(f)
