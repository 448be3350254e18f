"""Localism (Hupkes et al. 2020, section 6.2.3): does a model compute an input the
same way when it sees it whole and when it sees its computation unrolled, each step
fed the model's *own* output of the step before?

Input: the unrolled format (``label<TAB>source<TAB>target``; a run of ``unrolled``
lines, then the ``original`` line; ``*k`` in a source stands for the output of the
sample's k-th line).  Written against the translator protocol, so it runs on
every backend's models alike (a program's too; answer files cannot feed outputs back).

Batching: every line gets a *level*, 1 + the highest level of the lines it refers
to (1 for a line with no ``*k``).  All lines of one level, across all samples, go to
the model in one ``translate`` call, after the lower levels have produced the
outputs they need.  The number of calls is 1 (the original inputs) + the deepest
level, whatever the number of samples.  :func:`run_unbatched` is the
one-line-at-a-time loop, kept for the benchmark.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from compsuite.eval.metrics.accuracy import sequence_accuracy, signature as accuracy_signature
from compsuite.eval.metrics.consistency import consistency
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_lines

PLACEHOLDER = re.compile(r"^\*(\d+)$")


@dataclass
class Sample:
    original: str
    target: str
    steps: list[str]                        # unrolled sources with *k placeholders
    levels: list[int] = field(default_factory=list)
    line: int = 0                           # line of the 'original' row, for messages


def read_unrolled(path: str | Path) -> list[Sample]:
    """Parse an unrolled file; malformed rows are errors naming the line."""
    samples, steps, first = [], [], None
    for lineno, row in enumerate(iter_lines(path), start=1):
        parts = row.split("\t")
        if len(parts) != 3:
            raise DataError(f"{path}: line {lineno}: expected label<TAB>source<TAB>target, "
                            f"got {len(parts)} fields")
        label, src, tgt = parts
        if label == "unrolled":
            steps.append(src)
            first = first or lineno
        elif label == "original":
            if not steps:
                raise DataError(f"{path}: line {lineno}: 'original' without unrolled lines")
            samples.append(_levels(Sample(src.strip(), tgt.strip(), steps, line=lineno), path))
            steps, first = [], None
        else:
            raise DataError(f"{path}: line {lineno}: unknown label {label!r}")
    if steps:
        raise DataError(f"{path}: line {first}: unrolled lines without their 'original' line")
    if not samples:
        raise DataError(f"{path}: no samples")
    return samples


def _levels(sample: Sample, path) -> Sample:
    for k, src in enumerate(sample.steps):
        refs = [int(m.group(1)) for t in src.split() if (m := PLACEHOLDER.match(t))]
        if any(r < 1 or r > k for r in refs):
            raise DataError(f"{path}: sample ending at line {sample.line}: step {k + 1} "
                            f"refers to a step that does not precede it")
        sample.levels.append(1 + max((sample.levels[r - 1] for r in refs), default=0))
    return sample


def _fill(src: str, outputs: dict[int, str]) -> str:
    return " ".join(outputs[int(m.group(1))] if (m := PLACEHOLDER.match(t)) else t
                    for t in src.split())


def run(translator, samples: list[Sample], desc: str = "localism", show: bool = False) -> dict:
    """Batched by level.  Returns per-sample traces and the scores.  ``show``: one bar
    (``desc``) over every line translated, whole and unrolled."""
    from compsuite.models.protocol import progress

    with progress(translator, sum(1 + len(s.steps) for s in samples), desc, show):
        whole, outputs, filled = _translate_levels(translator, samples)
    return _score(samples, whole, outputs, filled)


def _translate_levels(translator, samples: list[Sample]) -> tuple[list, list, list]:
    """The originals whole, then the unrolled lines level by level: (whole outputs,
    outputs and filled-in inputs per sample and step)."""
    whole = translator.translate([s.original for s in samples])
    outputs: list[dict[int, str]] = [{} for _ in samples]
    filled: list[dict[int, str]] = [{} for _ in samples]
    depth = max(max(s.levels) for s in samples)
    for level in range(1, depth + 1):
        jobs = [(i, k) for i, s in enumerate(samples) for k, lv in enumerate(s.levels)
                if lv == level]
        for i, k in jobs:
            filled[i][k + 1] = _fill(samples[i].steps[k], outputs[i])
        results = translator.translate([filled[i][k + 1] for i, k in jobs])
        for (i, k), out in zip(jobs, results):
            outputs[i][k + 1] = out
    return whole, outputs, filled


def run_unbatched(translator, samples: list[Sample]) -> dict:
    """The same test, one line at a time (for comparison)."""
    whole, outputs, filled = [], [], []
    for s in samples:
        whole += translator.translate([s.original])
        outs: dict[int, str] = {}
        fills: dict[int, str] = {}
        for k, src in enumerate(s.steps):
            fills[k + 1] = _fill(src, outs)
            outs[k + 1] = translator.translate([fills[k + 1]])[0]
        outputs.append(outs)
        filled.append(fills)
    return _score(samples, whole, outputs, filled)


def _score(samples: list[Sample], whole: list[str], outputs: list[dict[int, str]],
           filled: list[dict[int, str]]) -> dict:
    unrolled = [outputs[i][len(s.steps)] for i, s in enumerate(samples)]
    targets = [s.target for s in samples]
    depth = [str(max(s.levels)) for s in samples]
    cons = consistency(whole, unrolled, targets, depth)
    traces = [{"original": s.original, "target": s.target, "output_original": whole[i],
               "steps": [{"source": src, "input": filled[i][k + 1], "output": outputs[i][k + 1]}
                         for k, src in enumerate(s.steps)],
               "output_unrolled": unrolled[i], "consistent": whole[i].split() == unrolled[i].split()}
              for i, s in enumerate(samples)]
    return {
        "n": len(samples),
        "consistency": cons.as_dict(),
        "accuracy_original": sequence_accuracy(whole, targets).accuracy,
        "accuracy_unrolled": sequence_accuracy(unrolled, targets).accuracy,
        "accuracy_signature": accuracy_signature().format(),
        "traces": traces,
    }
