"""Hupkes et al.'s (2020) ordering of the three architectures on the PCFG SET task,
checked on one seed's results at a time (see :mod:`compsuite.eval.reports.findings`):
the Transformer first, then the ConvS2S, then the LSTMS2S (section 7.1, Table 3's
first row: 0.92 / 0.85 / 0.79).  It reads the task runs the tests use (one run per
architecture, ``test_runs``), as Table 3 of the report does.
"""
from __future__ import annotations

from compsuite.eval.reports.findings import Check, Finding, Missing

NAMES = {"lstms2s": "LSTMS2S", "convs2s": "ConvS2S", "transformer": "Transformer"}


def _task(results: list[dict], runs: set[str]) -> dict[str, float]:
    """architecture -> task accuracy of its test run on this seed."""
    return {r["architecture"]: r["accuracy"] for r in results
            if r.get("part") == "task" and r["run"] in runs and "accuracy" in r}


def _above(better: str, *worse: str, runs: set[str]):
    def check(results):
        acc = _task(results, runs)
        lacking = [a for a in (better, *worse) if a not in acc]
        if lacking:
            raise Missing("no task run of " + ", ".join(NAMES[a] for a in lacking))
        return Check(all(acc[better] > acc[w] for w in worse),
                     {f"{NAMES[a]}: task accuracy": acc[a] for a in (better, *worse)})
    return check


def findings(test_runs) -> list[Finding]:
    runs = set(test_runs)
    return [
        Finding("Transformer first",
                "The Transformer has the highest task accuracy of the three "
                "architectures: 0.92 against ConvS2S 0.85 and LSTMS2S 0.79",
                "section 7.1, Table 3",
                "the Transformer's task accuracy is above the ConvS2S's and the LSTMS2S's",
                _above("transformer", "convs2s", "lstms2s", runs=runs)),
        Finding("ConvS2S above LSTMS2S",
                "The ConvS2S has a higher task accuracy than the LSTMS2S: 0.85 against 0.79",
                "section 7.1, Table 3",
                "the ConvS2S's task accuracy is above the LSTMS2S's",
                _above("convs2s", "lstms2s", runs=runs)),
    ]
