"""Consistency (Table 6) and the <eos> problem on hand-computed cases."""
import pytest

from compsuite.eval.metrics.consistency import consistency, eos_problem_share

A = ["A1 B1", "C1", "D1 D1", "E1", "F1"]
B = ["A1 B1", "C1", "D1", "X1", "F1"]
R = ["A1 B1", "C2", "D1 D1", "E1", "F1 F1"]
# pair 0: same, both right; 1: same, both wrong; 2: differ (a right); 3: differ (a right);
# 4: same, both wrong


def test_consistency_table6_breakdown():
    r = consistency(A, B, R)
    assert r.n == 5
    assert r.consistency == pytest.approx(3 / 5)
    assert r.consistent_correct == pytest.approx(1 / 5)
    assert r.consistent_incorrect == pytest.approx(2 / 5)
    assert r.n_incorrect_pairs == 4            # pairs 1-4 have at least one wrong output
    assert r.consistency_incorrect == pytest.approx(2 / 4)
    assert r.consistency == pytest.approx(r.consistent_correct + r.consistent_incorrect)
    assert "incorrect:either-output" in r.signature


def test_consistency_without_references_and_per_category():
    r = consistency(A, B, categories=["f", "f", "g", "g", "g"])
    assert r.consistent_correct is None and r.consistency == pytest.approx(0.6)
    assert r.breakdown == {"f": {"consistency": 1.0, "n": 2},
                           "g": {"consistency": pytest.approx(1 / 3), "n": 3}}


@pytest.mark.parametrize("a,b,ref", [(["x"], ["x", "y"], None), (["x"], ["x"], ["x", "y"]),
                                     ([], [], None)])
def test_consistency_rejects_misaligned_or_empty(a, b, ref):
    with pytest.raises(ValueError):
        consistency(a, b, ref)


def test_all_consistent_and_all_correct():
    r = consistency(R, R, R)
    assert (r.consistency, r.consistent_correct, r.consistent_incorrect) == (1.0, 1.0, 0.0)
    assert r.consistency_incorrect is None and r.n_incorrect_pairs == 0


def test_eos_problem_share():
    out = eos_problem_share(["A1 B1", "B1 C1", "A1", "X1", "A1 B1 C1"],
                            ["A1 B1 C1", "A1 B1 C1", "A1", "A1 B1", "A1 B1 C1"])
    # wrong: "A1 B1" (prefix, contained), "B1 C1" (contained), "X1" (neither)
    assert out["n_wrong"] == 3
    assert out["contained_share"] == pytest.approx(2 / 3)
    assert out["prefix_share"] == pytest.approx(1 / 3)
    assert eos_problem_share(["A1"], ["A1"])["contained_share"] is None
