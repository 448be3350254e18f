"""A paper's findings, checked seed by seed, with their spread over seeds.

A study lists the findings its reports can check (``Study.findings(profile)``): each is a
claim in words, where the paper makes it, and a check that takes the results of one
seed and says whether the claim holds there, with the numbers it rests on.
:func:`evaluate` runs every check on every seed of a profile's results; :func:`write`
puts ``findings.md`` and ``findings.json`` beside the report. Each finding says on how
many seeds it holds (and on which it does not), and each of its numbers has its mean,
sample standard deviation, minimum and maximum over the seeds.

A check raises :class:`Missing` when the seed lacks a result it needs (a run or a part
not selected): the finding is then "not measured" on that seed, which is neither a
holding nor a failing seed.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from compsuite.eval.reports.tables import fmt, markdown_table, mean_std, write_report

FINDINGS_JSON = "findings.json"
FINDINGS_MD = "findings.md"


class Missing(Exception):
    """A check lacks a result it needs on this seed (the message says which)."""


@dataclass(frozen=True)
class Check:
    """What a check found on one seed: whether the claim holds, and the numbers
    (name -> value) it decided on."""

    holds: bool
    values: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    """One claim: ``key`` (a short name), ``claim`` (in words, with the paper's
    numbers), ``source`` (the table or section), ``rule`` (how the check decides, in
    words) and ``check`` (the results of one seed -> :class:`Check`)."""

    key: str
    claim: str
    source: str
    rule: str
    check: Callable[[list[dict]], Check]


def by_seed(results: Sequence[dict]) -> dict[int, list[dict]]:
    """The results grouped by their ``seed``, seeds in ascending order."""
    groups: dict[int, list[dict]] = defaultdict(list)
    for r in results:
        groups[r.get("seed")].append(r)
    return {s: groups[s] for s in sorted(groups, key=lambda s: (s is None, s))}


def _spread(per_seed: dict[int, float]) -> dict:
    vals = [v for v in per_seed.values() if v is not None and not math.isnan(v)]
    if not vals:
        return {"per_seed": per_seed, "mean": None, "std": None, "min": None, "max": None}
    mean, std = mean_std(vals)
    return {"per_seed": per_seed, "mean": mean, "std": std, "min": min(vals), "max": max(vals)}


def status(holding: list, failing: list, missing: list) -> str:
    """The verdict in words: on how many measured seeds the finding holds."""
    measured = len(holding) + len(failing)
    if not measured:
        return "not measured"
    if not failing:
        verdict = f"holds on all {measured} seeds" if measured > 1 else "holds on the one seed"
    elif not holding:
        verdict = (f"does not hold on any of the {measured} seeds" if measured > 1
                   else "does not hold on the one seed")
    else:
        verdict = (f"holds on {len(holding)} of {measured} seeds "
                   f"(not on seed {', '.join(str(s) for s in failing)})")
    if missing:
        verdict += f"; not measured on seed {', '.join(str(s) for s in missing)}"
    return verdict


def evaluate(findings: Sequence[Finding], results: Sequence[dict]) -> list[dict]:
    """Every finding checked on every seed: a dict per finding with ``key``, ``claim``,
    ``source``, ``rule``, ``seeds`` (seed -> ``holds`` true/false, or ``missing`` with
    the reason), ``holding`` / ``failing`` / ``missing`` seeds, ``status`` (in words)
    and ``values`` (name -> per-seed values and their spread)."""
    seeds = by_seed(results)
    out = []
    for f in findings:
        per: dict = {}
        values: dict[str, dict] = defaultdict(dict)
        for seed, rs in seeds.items():
            try:
                c = f.check(rs)
            except Missing as e:
                per[seed] = {"missing": str(e)}
                continue
            per[seed] = {"holds": bool(c.holds)}
            for name, v in c.values.items():
                values[name][seed] = v if v is None or isinstance(v, int) else float(v)
        holding = [s for s, p in per.items() if p.get("holds") is True]
        failing = [s for s, p in per.items() if p.get("holds") is False]
        missing = [s for s, p in per.items() if "missing" in p]
        out.append({"key": f.key, "claim": f.claim, "source": f.source, "rule": f.rule,
                    "seeds": per, "holding": holding, "failing": failing,
                    "missing": missing, "status": status(holding, failing, missing),
                    "values": {k: _spread(v) for k, v in values.items()}})
    return out


def _range(v: dict) -> str:
    if v["mean"] is None:
        return "–"
    cell = fmt(v["mean"])
    if v["std"] is not None:
        cell += f" ± {fmt(v['std'])} ({fmt(v['min'])}–{fmt(v['max'])})"
    return cell


def markdown(title: str, checked: list[dict]) -> list[str]:
    """``findings.md``'s lines: a table of verdicts, then per finding its rule and its
    numbers per seed with mean ± std (min–max)."""
    seeds = sorted({s for f in checked for s in f["seeds"]}, key=lambda s: (s is None, s))
    md = [f"# {title}: the paper's findings, seed by seed", "",
          f"Each finding checked on each seed's results separately (seeds "
          f"{', '.join(str(s) for s in seeds) or '–'}); numbers are mean ± sample std "
          f"(min–max) over the seeds.", "",
          markdown_table(["finding", "paper", "verdict"],
                         [[f"**{f['key']}**: {f['claim']}", f["source"], f["status"]]
                          for f in checked]), ""]
    for f in checked:
        md += [f"## {f['key']}", "", f["claim"] + f" ({f['source']}).", "",
               f"Rule: {f['rule']}", "", f"**{f['status']}**.", ""]
        for seed, p in f["seeds"].items():
            if "missing" in p:
                md.append(f"* seed {seed}: not measured: {p['missing']}")
        if any("missing" in p for p in f["seeds"].values()):
            md.append("")
        if f["values"]:
            rows = [[name, *[fmt(v["per_seed"][s]) if v["per_seed"].get(s) is not None
                             else "–" for s in seeds], _range(v)]
                    for name, v in f["values"].items()]
            held = {s: ("yes" if f["seeds"].get(s, {}).get("holds") else
                        "no" if "holds" in f["seeds"].get(s, {}) else "–") for s in seeds}
            rows.append(["holds", *[held[s] for s in seeds], f"{len(f['holding'])} of "
                         f"{len(f['holding']) + len(f['failing'])}"])
            md += [markdown_table(["", *[f"seed {s}" for s in seeds], "over seeds"], rows), ""]
    return md


def write(out_dir: Path, title: str, study: str, profile: str,
          findings: Sequence[Finding], results: Sequence[dict]) -> list[Path]:
    """``findings.json`` and ``findings.md`` in ``out_dir`` (atomically); [] when the
    study lists no findings."""
    if not findings:
        return []
    checked = evaluate(findings, results)
    report = {"study": study, "profile": profile, "findings": checked}
    return write_report(out_dir, report, markdown(title, checked),
                        json_name=FINDINGS_JSON, md_name=FINDINGS_MD)
