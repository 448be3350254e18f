"""Kumon et al.'s (2024) Table 2, checked on one seed's results at a time (see
:mod:`compsuite.eval.reports.findings`): each model learns the in-distribution test set
and translates the generalisation set far worse.  Exact match in percent, on the
``main`` part (the benchmark as published).
"""
from __future__ import annotations

from compsuite.eval.reports.findings import Check, Finding, Missing

#: architecture -> (name, Table 2's test and gen exact match)
PAPER = {"lstm": ("LSTM", 93.4, 9.6), "transformer": ("Transformer", 99.3, 48.7),
         "llama2": ("Llama 2", 99.4, 80.6)}
LEARNT = 90.0   # test exact match that counts as having learnt the task
GAP = 10.0      # points between test and gen that count as "far worse"


def _exact(results: list[dict], arch: str) -> tuple[float, float]:
    stand_in = None
    for r in results:
        if r.get("part") == "main" and r.get("architecture") == arch and r.get("splits"):
            s = r["splits"]
            if "test" in s and "gen" in s:
                if r.get("stand_in"):       # the report shows it; a finding is the paper's model's
                    stand_in = r["stand_in"]
                    continue
                return 100 * s["test"]["exact_match"], 100 * s["gen"]["exact_match"]
    if stand_in:
        raise Missing(f"only a stand-in, not the {PAPER[arch][0]} ({stand_in})")
    raise Missing(f"no {PAPER[arch][0]} result with test and gen on the main part")


def _learns(arch):
    def check(results):
        test, _ = _exact(results, arch)
        return Check(test >= LEARNT, {f"{PAPER[arch][0]}: test exact %": test})
    return check


def _gap(arch):
    def check(results):
        test, gen = _exact(results, arch)
        name = PAPER[arch][0]
        return Check(test - gen >= GAP, {f"{name}: test exact %": test,
                                         f"{name}: gen exact %": gen,
                                         f"{name}: test - gen": test - gen})
    return check


def _systems_gap(results):
    """Every system beyond the paper's three (a prompted language model, a program, a
    model of yours) on the main part: gen at least ``GAP`` points below test, as the
    paper found for each of its models."""
    values, held = {}, True
    for r in results:
        arch = r.get("architecture")
        if r.get("part") != "main" or arch in PAPER or not r.get("splits"):
            continue
        s = r["splits"]
        if "test" in s and "gen" in s:
            name = arch + (f" ({r['usage']['label']})" if (r.get("usage") or {}).get("label")
                           else "")
            test, gen = 100 * s["test"]["exact_match"], 100 * s["gen"]["exact_match"]
            values[f"{name}: test exact %"] = test
            values[f"{name}: gen exact %"] = gen
            held = held and test - gen >= GAP
    if not values:
        raise Missing("no system beyond the paper's three with test and gen on the main part")
    return Check(held, values)


def findings() -> list[Finding]:
    out = []
    for arch, (name, test, gen) in PAPER.items():
        out += [
            Finding(f"{name} learns the test set",
                    f"The {name} translates the in-distribution test set almost perfectly: "
                    f"{test} exact match", "Table 2",
                    f"test exact match at least {LEARNT:g}%", _learns(arch)),
            Finding(f"{name}: gen far below test",
                    f"The {name} translates the generalisation set far worse than the test "
                    f"set: {gen} against {test} exact match", "Table 2",
                    f"gen exact match at least {GAP:g} points below test", _gap(arch)),
        ]
    out += [Finding("every other system: gen far below test",
                    "Every model the paper tests translates the generalisation set far worse "
                    "than the test set (Table 2); so does each system brought beside them (a "
                    "prompted language model, a program, a model of yours)", "Table 2",
                    f"gen exact match at least {GAP:g} points below test, for every such "
                    "system", _systems_gap)]
    return out
