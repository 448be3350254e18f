"""CTL++ evaluation (Csordás et al. 2022): accuracy on the IID and OOD tests, the
representation analysis of section 4.1 and the compatibility matrix of figure 6.

Everything goes through the classifier protocol (:mod:`compsuite.models`):
a checkpoint that maps lists of input strings to predicted symbols, and to the
representation below the classifier.  The metrics themselves are pure functions over
lists of strings; the figures are drawn by :mod:`compsuite.eval.ctlpp.plots` and
:mod:`compsuite.eval.reports.plots`.  :func:`evaluate` scores one unit of the study.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from compsuite.eval.metrics.accuracy import accuracy_by, sequence_accuracy
from compsuite.eval.metrics.signature import Signature
from compsuite.studies.evaluations import breakdown

if TYPE_CHECKING:  # pragma: no cover
    from compsuite.studies.base import Context

#: the compatibility matrix's accuracy (figure 6)
COMPATIBILITY_SIGNATURE = Signature("accuracy", "1",
                                    {"inputs": "all-two-function-compositions"})
#: section 4.1's mean similarity: the cosine of the representations below the classifier
#: of two functions' single applications that give one symbol, averaged over the pairs
#: of functions within a group and between groups
REPRESENTATION_SIGNATURE = Signature("cosine_similarity", "1", {
    "features": "below-classifier", "pairs": "functions-giving-one-symbol",
    "mean": "within-and-between-groups"})


def evaluate(ctx: "Context") -> dict:
    """IID and OOD accuracy (per length) and, for Table 1's units, the
    compatibility matrix and the representation similarities."""
    return analyse(ctx.load(kind="classifier"), ctx.data.raw, ctx.unit.part == "table1")


def analyse(clf, raw, analyses: bool = True) -> dict:
    """A classifier on a dataset's raw folder (``test_iid``/``test_ood`` ``.src``/
    ``.tgt`` and ``manifest.json``): accuracy by length and, with ``analyses``, the
    compatibility matrix and the representation similarities (None in place of those
    when the model has no representations to give: answers read from files, a program
    that does not answer ``features``)."""
    from compsuite.models.protocol import Unavailable, ask, require
    from compsuite.foundation.io import read_aligned
    from compsuite.foundation.manifest import read_manifest

    out = {}
    for split in ("test_iid", "test_ood"):
        src, tgt = read_aligned(raw / f"{split}.src", raw / f"{split}.tgt")
        out[split] = accuracy_by_length(src, ask(clf, "classify", src, split), tgt)
    if analyses:
        m = read_manifest(raw)
        if m is None:
            from compsuite.foundation.errors import DataError

            raise DataError(f"{raw}: no manifest.json (the functions and symbols of the "
                            "task; generate the data with 'compsuite data ctlpp generate')")
        out["compatibility"] = compatibility_matrix(clf, m["functions"], m["symbols"],
                                                    m["groups"])
        try:
            require(clf, "features", "representations (section 4.1)",
                    "it compares the model's representations")
            out["representations"] = representation_similarity(clf, m["functions"],
                                                               m["symbols"], m["groups"])
        except Unavailable as e:   # answers from files, a program without `features`
            out["representations"] = {"unavailable": str(e)}
    return out


@breakdown("ctlpp")
def composition_length(source: str) -> dict:
    """The number of functions an input composes (its tokens but the symbol): what
    ``compsuite eval accuracy --breakdown ctlpp`` groups any system's outputs by."""
    return {"length": len(source.split()) - 1}


def accuracy_by_length(inputs: Sequence[str], predictions: Sequence[str],
                       targets: Sequence[str]) -> dict:
    """Accuracy overall and per number of composed functions."""
    res = sequence_accuracy(predictions, targets).as_dict()
    lengths = [composition_length(s)["length"] for s in inputs]
    res["by_length"] = {str(k): v for k, v in accuracy_by(predictions, targets, lengths).items()}
    return res


def compatibility_matrix(classifier, functions: dict[str, list[str]], symbols: list[str],
                         groups: dict[str, list[str]]) -> dict:
    """Figure 6: accuracy of every two-function composition ``g f x`` (f applied first)
    on every symbol, by group of f (rows) and group of g (columns)."""
    group_of = {f: g for g, fs in groups.items() for f in fs}
    inputs, targets, cells = [], [], []
    for f in functions:
        for g in functions:
            for i, x in enumerate(symbols):
                mid = functions[f][i]
                inputs.append(f"{g} {f} {x}")
                targets.append(functions[g][symbols.index(mid)])
                cells.append((group_of[f], group_of[g]))
    from compsuite.models.protocol import ask

    preds = ask(classifier, "classify", inputs, "compatibility")
    by = accuracy_by(preds, targets, [f"{a}->{b}" for a, b in cells])
    names = list(groups)
    return {"groups": names,
            "matrix": [[by.get(f"{a}->{b}", {}).get("accuracy") for b in names] for a in names],
            "n": {k: v["n"] for k, v in by.items()},
            "signature": COMPATIBILITY_SIGNATURE.format()}


def representation_similarity(classifier, functions: dict[str, list[str]],
                              symbols: list[str], groups: dict[str, list[str]]) -> dict:
    """Section 4.1: for each symbol s, the representation below the classifier of every
    single application ``f x`` with f(x) = s; the cosine-similarity matrix between
    functions (ordered by group), per symbol, and the mean similarity within and
    between groups."""
    import torch

    from compsuite.models.protocol import ask

    order = [f for g in groups for f in groups[g]]
    group_of = {f: g for g, fs in groups.items() for f in fs}
    out = {"functions": order, "groups": {f: group_of[f] for f in order}, "per_symbol": {}}
    pair_sums: dict[str, list[float]] = {}
    for s in symbols:
        inputs = [f"{f} {symbols[functions[f].index(s)]}" for f in order]   # f(x) = s
        feats = ask(classifier, "features", inputs, "representations (section 4.1)")
        feats = torch.nn.functional.normalize(feats.float(), dim=-1)
        sim = (feats @ feats.T).tolist()
        out["per_symbol"][s] = sim
        for i, f in enumerate(order):
            for j, g in enumerate(order):
                if i < j:
                    key = "within" if group_of[f] == group_of[g] else "between"
                    pair_sums.setdefault(key, []).append(sim[i][j])
    out["mean_similarity"] = {k: sum(v) / len(v) for k, v in pair_sums.items()}
    out["signature"] = REPRESENTATION_SIGNATURE.format()
    return out

