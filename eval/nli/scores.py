"""NLI scores (Nie, Wang and Bansal 2019), pure functions over label strings: accuracy on
a dev set and on its CS_λ subsets (Table 5), and the shares of entailment /
contradiction / neutral predictions on an adversary set (Tables 2 and 4).

Any system can be scored: a model through the classifier protocol, or a plain file of
``pairID<TAB>label`` lines (:func:`read_predictions`), matched to the dev or adversary
file by pair id.  Labels are SNLI's (``entailment``, ``neutral``, ``contradiction``);
the short forms ``e``/``n``/``c`` (any case) are read too.
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_lines

LABELS = ("entailment", "neutral", "contradiction")
SHORT = {"e": "entailment", "n": "neutral", "c": "contradiction"}
#: the order Tables 2 and 4 print the shares in
SHARE_ORDER = ("entailment", "contradiction", "neutral")
VERSION = "1"


def normalise_label(label: str, where: str = "label") -> str:
    low = label.strip().lower()
    low = SHORT.get(low, low)
    if low not in LABELS:
        raise DataError(f"{where}: unknown label {label!r} (entailment, neutral, "
                        "contradiction, or e / n / c)")
    return low


class PredictionFile(dict):
    """{pair id: label} as read from a file, with the line of each pair id (``lines``),
    for errors that name it."""

    def __init__(self, path: str | os.PathLike):
        super().__init__()
        self.path = str(path)
        self.lines: dict[str, int] = {}


def read_predictions(path: str | os.PathLike) -> PredictionFile:
    """``pairID<TAB>label`` lines -> {pair id: label}; a malformed line, an unknown
    label or a pair id given twice is an error naming the file and line."""
    path = Path(path)
    out = PredictionFile(path)
    for n, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0]:
            raise DataError(f"{path}:{n}: expected 'pairID<TAB>label', got {line[:60]!r}")
        pid, label = parts
        if pid in out:
            raise DataError(f"{path}:{n}: pair {pid!r} predicted twice")
        out[pid] = normalise_label(label, f"{path}:{n}")
        out.lines[pid] = n
    if not out:
        raise DataError(f"{path}: no predictions")
    return out


def align(pair_ids: Sequence[str], predictions: Mapping[str, str], source: str = "predictions"
          ) -> list[str]:
    """The predicted label of each pair, in order; a prediction for a pair id not in
    ``pair_ids`` is an error naming its line (when ``predictions`` was read from a file),
    and so are pairs without a prediction (naming how many and the first few)."""
    known = set(pair_ids)
    unknown = [p for p in predictions if p not in known]
    if unknown:
        line = getattr(predictions, "lines", {}).get(unknown[0])
        raise DataError(f"{source}{'' if line is None else f':{line}'}: pair {unknown[0]!r} is "
                        f"not among the {len(known)} pairs scored ({len(unknown)} of "
                        f"{len(predictions)} predictions are for unknown pair ids: predictions "
                        "of another set?)")
    missing = [p for p in pair_ids if p not in predictions]
    if missing:
        raise DataError(f"{source}: no prediction for {len(missing)} of {len(pair_ids)} pairs "
                        f"(first: {', '.join(missing[:3])})")
    return [predictions[p] for p in pair_ids]


def _check(gold: Sequence[str], pred: Sequence[str]) -> None:
    if len(gold) != len(pred):
        raise DataError(f"{len(gold)} gold labels but {len(pred)} predictions")


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float | None:
    """The share of pairs predicted right (None for no pairs)."""
    _check(gold, pred)
    if not gold:
        return None
    return sum(g == p for g, p in zip(gold, pred)) / len(gold)


def shares(pred: Sequence[str]) -> dict[str, float | None]:
    """Percent of predictions per label, in Tables 2 / 4's order (E, C, N)."""
    c = Counter(pred)
    n = len(pred)
    return {lab: (100.0 * c[lab] / n if n else None) for lab in SHARE_ORDER}


def signature(kind: str, **settings) -> Signature:
    """The signature of ``kind`` (``accuracy``, ``shares``): the labels, then the
    version, then ``settings`` sorted by name."""
    return Signature(f"nli-{kind}", VERSION, {"labels": ",".join(LABELS)},
                     dict(sorted(settings.items())))


def score_dev(gold: Sequence[str], pred: Sequence[str], lms_values: Sequence[float] | None = None,
              lambdas: Sequence[float] = (0.5, 0.6, 0.7), lms_signature: str | None = None) -> dict:
    """Accuracy (percent) on the whole set and, given the pairs' LMS, on each CS_λ, with
    the subsets' sizes (Table 5's row for one model)."""
    from compsuite.data_prep.nli.lexical import cs_subset

    _check(gold, pred)
    correct = [g == p for g, p in zip(gold, pred)]
    row = {"whole": _pct(correct), "n": len(correct), "cs": {}}
    if lms_values is not None:
        if len(lms_values) != len(gold):
            raise DataError(f"{len(lms_values)} LMS values for {len(gold)} pairs")
        for lam in lambdas:
            idx = cs_subset(lms_values, lam)
            row["cs"][str(lam)] = {"accuracy": _pct([correct[i] for i in idx]), "n": len(idx)}
    row["signature"] = signature("accuracy", lambdas=",".join(map(str, lambdas)),
                                 lms=lms_signature or "none").format()
    return row


def score_adversary(pred: Sequence[str], gold: Sequence[str] | None = None) -> dict:
    """E / C / N shares (percent) of the predictions on an adversary set and, when its
    labels are given, the accuracy (the share of the intended label)."""
    out = {"shares": shares(pred), "n": len(pred)}
    if gold is not None:
        _check(gold, pred)
        out["accuracy"] = _pct([g == p for g, p in zip(gold, pred)])
    out["signature"] = signature("shares", order="E,C,N").format()
    return out


def _pct(flags: Sequence[bool]) -> float | None:
    return 100.0 * sum(flags) / len(flags) if flags else None
