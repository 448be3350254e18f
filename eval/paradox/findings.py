"""Dankers et al.'s (2022) three phases of idiom overgeneralisation (section 4.3, Figure
3), checked on one seed's results at a time (see
:mod:`compsuite.eval.reports.findings`).  The curve is the mean over idioms of the
whole-word overgeneralisation score at each checkpoint, per training size and per kind
of context (not the random-word contexts), as Figure 3 plots it.  The phases' rules
(half of the peak) are this suite's reading of the figure; the paper gives no numbers
for them.  Where the idioms' training frequencies are known (the quick profile's
generated corpus), a fourth finding checks that frequent idioms are memorised more
(section 4.3: Pearson's r of .53 to .56 between frequency and the drop from the peak).
"""
from __future__ import annotations

import statistics
from collections import defaultdict

from compsuite.eval.paradox.report import overgeneralisation_curves, rows_by_run
from compsuite.eval.reports.findings import Check, Finding, Missing

MATCH = "word"   # whole-word overgeneralisation (the report's overgeneralisation_word)
SOURCE = "section 4.3.2, Figure 3"


def _curves(results: list[dict]) -> dict[tuple[str, str], dict[str, list[tuple[int, float]]]]:
    """(training size, context) -> idiom -> [(step, score)] in step order, from the
    report's curves of this seed (whole-word match, random-word contexts left out); the
    size reads ``<size> (<run>)`` when the results come from several runs, as in the
    report."""
    out: dict = defaultdict(dict)
    for (size, data, idiom, match), c in overgeneralisation_curves(rows_by_run(results)).items():
        if match == MATCH and data != "random":
            for values in c["per_seed"].values():   # one seed's results: one curve
                points = [(s, v) for s, v in zip(c["steps"], values) if v is not None]
                if points:
                    out[(size, data)][idiom] = points
    if not out:
        raise Missing("no overgeneralisation curve in the results")
    return out


def _mean_curve(by_idiom: dict[str, list[tuple[int, float]]]) -> list[tuple[int, float]]:
    steps = sorted({s for curve in by_idiom.values() for s, _ in curve})
    if len(steps) < 3:
        raise Missing(f"{len(steps)} checkpoints scored; the phases need at least 3")
    at = {i: dict(c) for i, c in by_idiom.items()}
    return [(s, statistics.fmean(c[s] for c in at.values() if s in c)) for s in steps]


def _phase(which: str):
    def check(results):
        holds, values = True, {}
        for (size, data), by_idiom in _curves(results).items():
            curve = _mean_curve(by_idiom)
            peak_i = max(range(len(curve)), key=lambda i: curve[i][1])
            first, peak, last = curve[0][1], curve[peak_i][1], curve[-1][1]
            where = f"{size}, {data}"
            if which == "first":
                holds &= first <= peak / 2
                values.update({f"{where}: first checkpoint": first, f"{where}: peak": peak})
            elif which == "peak":
                holds &= 0 < peak_i < len(curve) - 1
                values.update({f"{where}: peak": peak, f"{where}: peak at update": curve[peak_i][0]})
            else:
                holds &= last <= peak / 2
                values.update({f"{where}: peak": peak, f"{where}: last checkpoint": last})
        return Check(holds, values)
    return check


def _frequency(frequencies: dict[str, int] | None):
    def check(results):
        if not frequencies:
            raise Missing("the idioms' frequencies in the training corpus are not known "
                          "(only for the generated corpus)")
        holds, values = True, {}
        for (size, data), by_idiom in _curves(results).items():
            idioms = [i for i in by_idiom if i in frequencies]
            if len(idioms) < 3:
                raise Missing(f"{len(idioms)} idioms of known frequency; r needs at least 3")
            drop = [max(v for _, v in by_idiom[i]) - by_idiom[i][-1][1] for i in idioms]
            try:
                r = statistics.correlation([frequencies[i] for i in idioms], drop)
            except statistics.StatisticsError:   # every idiom dropped alike: no correlation
                r = 0.0
            holds &= r > 0
            values[f"{size}, {data}: Pearson r"] = r
            values.update({f"{size}, {data}: {i} ({frequencies[i]}x) peak - last": d
                           for i, d in zip(idioms, drop)})
        return Check(holds, values)
    return check


def findings(frequencies: dict[str, int] | None = None) -> list[Finding]:
    """The three phases, and (with the idioms' training ``frequencies``) memorisation
    by frequency."""
    return [
        Finding("phase 1: no keyword yet",
                "Early in training the translations do not contain the idiom's keyword",
                SOURCE, "the mean curve's first checkpoint is at most half of its peak",
                _phase("first")),
        Finding("phase 2: literal peak",
                "Then overgeneralisation peaks: the model translates the idiom literally",
                SOURCE, "the mean curve peaks after the first checkpoint and before the last",
                _phase("peak")),
        Finding("phase 3: memorisation",
                "Eventually the model memorises the idioms' translations",
                SOURCE, "the mean curve's last checkpoint is at most half of its peak",
                _phase("last")),
        Finding("frequent idioms memorised more",
                "Idioms seen more often in training fall further from their peak (Pearson's "
                "r of .53 to .56 between training frequency and the drop)",
                "section 4.3.2, footnote 10",
                "Pearson's r between each idiom's training frequency and its drop from "
                "peak to last checkpoint is positive", _frequency(frequencies)),
    ]
