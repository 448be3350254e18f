"""Sequence accuracy: the share of outputs identical to their reference.

Pure functions over lists of strings.  Outputs and references are compared as
whitespace-separated token sequences (so spacing differences do not count).  Every
result carries a ``signature`` of the settings that change the number, in the
spirit of sacreBLEU's.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Hashable, Sequence

from compsuite.eval.metrics.signature import Signature

VERSION = "1"


@dataclass
class AccuracyResult:
    accuracy: float
    n: int
    correct: int
    signature: str
    breakdown: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


SIGNATURE = Signature("seq_acc", VERSION,
                      {"match": "exact", "tok": "whitespace", "case": "mixed"})


def signature(**settings) -> Signature:
    """Sequence accuracy's signature, ``settings`` changed or added (after the version)."""
    return SIGNATURE.with_settings(**settings)


def matches(hypotheses: Sequence[str], references: Sequence[str]) -> list[bool]:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return [h.split() == r.split() for h, r in zip(hypotheses, references)]


def sequence_accuracy(hypotheses: Sequence[str], references: Sequence[str]) -> AccuracyResult:
    ok = matches(hypotheses, references)
    if not ok:
        raise ValueError("no predictions to score")
    return AccuracyResult(sum(ok) / len(ok), len(ok), sum(ok), signature().format())


def accuracy_by(hypotheses: Sequence[str], references: Sequence[str], keys: Sequence[Hashable]
                ) -> dict:
    """Accuracy per category: ``{key: {"accuracy", "n", "correct"}}``, keys sorted."""
    if len(keys) != len(hypotheses):
        raise ValueError(f"{len(keys)} keys for {len(hypotheses)} hypotheses")
    ok = matches(hypotheses, references)
    groups: dict = defaultdict(lambda: [0, 0])
    for k, good in zip(keys, ok):
        groups[k][0] += good
        groups[k][1] += 1
    return {k: {"accuracy": c / n, "n": n, "correct": c} for k, (c, n) in sorted(groups.items())}


def accuracy_with_breakdown(hypotheses: Sequence[str], references: Sequence[str],
                            features: dict[str, Sequence[Hashable]] | None = None
                            ) -> AccuracyResult:
    """Overall accuracy plus :func:`accuracy_by` for each named feature list."""
    res = sequence_accuracy(hypotheses, references)
    for name, keys in (features or {}).items():
        res.breakdown[name] = accuracy_by(hypotheses, references, keys)
    return res


FeatureFn = Callable[[str], dict[str, Hashable]]
