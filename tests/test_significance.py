import pytest

from compsuite.eval.metrics.significance import welch


def test_welch_golden():
    # hand computation: means 2 and 5, variances 1 and 1, n 3 and 3:
    # t = (2 - 5) / sqrt(1/3 + 1/3) = -3.674; df = 4; two-sided p = 0.0213
    r = welch([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert r["t"] == pytest.approx(-3.6742, abs=1e-4)
    assert r["p"] == pytest.approx(0.02131, abs=1e-4)


def test_welch_undefined_cases():
    assert welch([0.5], [0.6, 0.7])["t"] is None
    assert welch([0.5, 0.5], [0.7, 0.7])["note"] == "both groups constant"
