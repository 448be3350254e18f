"""Welch's t-test between two groups of per-seed scores (section 7 of Hupkes et al.
2020 compares architectures this way), through scipy."""
from __future__ import annotations

from typing import Sequence


def welch(a: Sequence[float], b: Sequence[float]) -> dict:
    """Welch's unequal-variance t-test; ``None`` values when a group has < 2 scores
    or both groups are constant (the test is undefined)."""
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return {"t": None, "p": None, "n_a": len(a), "n_b": len(b),
                "note": "needs at least 2 seeds per group"}
    if len(set(a)) == 1 and len(set(b)) == 1:
        return {"t": None, "p": None, "n_a": len(a), "n_b": len(b),
                "note": "both groups constant"}
    res = stats.ttest_ind(list(a), list(b), equal_var=False)
    return {"t": float(res.statistic), "p": float(res.pvalue), "n_a": len(a), "n_b": len(b)}
