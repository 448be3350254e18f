"""Consistency of a model's outputs over aligned input pairs (Hupkes et al. 2020,
Table 6): substitutivity (an input and its synonym twin), localism (the whole input
and its unrolled computation).  Pure functions over lists of strings.

Definitions (outputs compared as whitespace-separated token sequences):

* ``consistency``: share of pairs whose two outputs are equal;
* ``consistent_correct``: share of pairs whose two outputs are equal and correct;
* ``consistent_incorrect``: share of pairs whose two outputs are equal and wrong;
* ``consistency_incorrect``: among pairs with at least one wrong output, the share
  whose outputs are equal (the paper's "consistency of incorrect outputs").  The
  choice "at least one wrong" (not "both wrong") is part of the signature.

``consistency == consistent_correct + consistent_incorrect`` always.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Hashable, Sequence

from compsuite.eval.metrics.signature import Signature

VERSION = "1"


def signature(with_reference: bool) -> Signature:
    return Signature("consistency", VERSION, {
        "match": "exact", "tok": "whitespace", "case": "mixed",
        "incorrect": "either-output" if with_reference else "n/a"})


EOS_PROBLEM_SIGNATURE = Signature("eos_problem", VERSION,
                                  {"contained": "contiguous", "tok": "whitespace"})


@dataclass
class ConsistencyResult:
    consistency: float
    n: int
    consistent_correct: float | None = None
    consistent_incorrect: float | None = None
    consistency_incorrect: float | None = None
    n_incorrect_pairs: int | None = None
    signature: str = ""
    breakdown: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _counts(a: Sequence[str], b: Sequence[str], ref: Sequence[str] | None) -> list[int]:
    same = [x.split() == y.split() for x, y in zip(a, b)]
    if ref is None:
        return [sum(same), len(same), 0, 0, 0]
    ok_a = [x.split() == r.split() for x, r in zip(a, ref)]
    ok_b = [y.split() == r.split() for y, r in zip(b, ref)]
    cc = sum(s and p and q for s, p, q in zip(same, ok_a, ok_b))
    ci = sum(s and not p for s, p in zip(same, ok_a))
    wrong = [not (p and q) for p, q in zip(ok_a, ok_b)]
    return [sum(same), len(same), cc, ci, sum(wrong)]


def _result(c: list[int], with_ref: bool) -> dict:
    same, n, cc, ci, n_wrong = c
    out = {"consistency": same / n, "n": n}
    if with_ref:
        out.update(consistent_correct=cc / n, consistent_incorrect=ci / n,
                   consistency_incorrect=(ci / n_wrong) if n_wrong else None,
                   n_incorrect_pairs=n_wrong)
    return out


def consistency(outputs_a: Sequence[str], outputs_b: Sequence[str],
                references: Sequence[str] | None = None,
                categories: Sequence[Hashable] | None = None) -> ConsistencyResult:
    """Consistency of aligned outputs; with references, the Table 6 breakdown; with
    categories (e.g. the substituted function), the same per category."""
    n = len(outputs_a)
    if len(outputs_b) != n or (references is not None and len(references) != n):
        raise ValueError(f"aligned lists differ in length: {n}, {len(outputs_b)}"
                         + ("" if references is None else f", {len(references)}"))
    if n == 0:
        raise ValueError("no output pairs to compare")
    if categories is not None and len(categories) != n:
        raise ValueError(f"{len(categories)} categories for {n} pairs")
    with_ref = references is not None
    res = ConsistencyResult(**_result(_counts(outputs_a, outputs_b, references), with_ref),
                            signature=signature(with_ref).format())
    if categories is not None:
        idx: dict = defaultdict(list)
        for i, c in enumerate(categories):
            idx[c].append(i)
        for c, ids in sorted(idx.items()):
            sub = _counts([outputs_a[i] for i in ids], [outputs_b[i] for i in ids],
                          None if references is None else [references[i] for i in ids])
            res.breakdown[c] = _result(sub, with_ref)
    return res


def eos_problem_share(hypotheses: Sequence[str], references: Sequence[str]) -> dict:
    """Among wrong outputs, the share that is a contiguous part of the target (the
    model stopped early or skipped a part: section 7.3's <eos> problem) and the
    share that is a strict prefix of it."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    wrong = contained = prefix = 0
    for h, r in zip(hypotheses, references):
        ht, rt = h.split(), r.split()
        if ht == rt:
            continue
        wrong += 1
        if ht and len(ht) < len(rt):
            prefix += rt[:len(ht)] == ht
            contained += any(rt[i:i + len(ht)] == ht for i in range(len(rt) - len(ht) + 1))
    return {"n_wrong": wrong, "contained_share": contained / wrong if wrong else None,
            "prefix_share": prefix / wrong if wrong else None,
            "signature": EOS_PROBLEM_SIGNATURE.format()}
