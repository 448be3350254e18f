"""CTL++ evaluation (Csordás et al. 2022): accuracy on the IID and OOD tests, the
representation analysis of section 4.1 and the compatibility matrix of figure 6.

Everything goes through :class:`FairseqClassifier`, which loads a checkpoint trained
with ``--task ctlpp_classification`` and maps lists of input strings to predicted
symbols (and to the representation below the classifier).  The metrics themselves
are pure functions over lists of strings.
"""
from __future__ import annotations

from argparse import Namespace
from pathlib import Path
from typing import Sequence

from compsuite.eval.metrics.accuracy import accuracy_by, sequence_accuracy


class FairseqClassifier:
    """A CTL++ classifier checkpoint: ``predict`` and ``features`` over input strings."""

    def __init__(self, checkpoint: str | Path, data: str | Path, batch_size: int = 512):
        import torch
        from fairseq import checkpoint_utils, utils

        from compsuite.eval.translators.base import quiet
        from compsuite.registry import ROOT
        from compsuite.torch_compat import allow_toolkit_checkpoints

        quiet("fairseq")
        allow_toolkit_checkpoints()
        utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
        checkpoint = Path(checkpoint)
        if not checkpoint.is_file():
            raise FileNotFoundError(f"checkpoint {checkpoint} not found")
        models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            [str(checkpoint)], arg_overrides={"data": str(Path(data).resolve())})
        self.model = models[0].eval()
        self.task = task
        self.batch_size = batch_size
        self.torch = torch
        self.calls = 0

    def _batches(self, inputs: Sequence[str]):
        d = self.task.source_dictionary
        for i in range(0, len(inputs), self.batch_size):
            chunk = inputs[i:i + self.batch_size]
            toks = [d.encode_line(s, add_if_not_exist=False, append_eos=True).long()
                    for s in chunk]
            for s, t in zip(chunk, toks):
                if (t == d.unk()).any():
                    raise ValueError(f"input {s!r} has a token the model's dictionary lacks")
            width = max(len(t) for t in toks)
            batch = self.torch.full((len(toks), width), d.pad(), dtype=self.torch.long)
            for j, t in enumerate(toks):
                batch[j, :len(t)] = t
            yield batch, self.torch.tensor([len(t) for t in toks])

    def predict(self, inputs: Sequence[str]) -> list[str]:
        self.calls += 1
        names = self.task.class_names()
        out: list[str] = []
        with self.torch.no_grad():
            for tokens, lengths in self._batches(inputs):
                out += [names[i] for i in self.model(tokens, lengths).argmax(-1).tolist()]
        return out

    def features(self, inputs: Sequence[str]):
        with self.torch.no_grad():
            return self.torch.cat([self.model.features(t, n) for t, n in self._batches(inputs)])


def accuracy_by_length(inputs: Sequence[str], predictions: Sequence[str],
                       targets: Sequence[str]) -> dict:
    """Accuracy overall and per number of composed functions."""
    res = sequence_accuracy(predictions, targets).as_dict()
    lengths = [len(s.split()) - 1 for s in inputs]
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
    preds = classifier.predict(inputs)
    by = accuracy_by(preds, targets, [f"{a}->{b}" for a, b in cells])
    names = list(groups)
    return {"groups": names,
            "matrix": [[by.get(f"{a}->{b}", {}).get("accuracy") for b in names] for a in names],
            "n": {k: v["n"] for k, v in by.items()},
            "signature": "metric:accuracy|inputs:all-two-function-compositions|version:1"}


def representation_similarity(classifier, functions: dict[str, list[str]],
                              symbols: list[str], groups: dict[str, list[str]]) -> dict:
    """Section 4.1: for each symbol s, the representation below the classifier of every
    single application ``f x`` with f(x) = s; the cosine-similarity matrix between
    functions (ordered by group), per symbol, and the mean similarity within and
    between groups."""
    import torch

    order = [f for g in groups for f in groups[g]]
    group_of = {f: g for g, fs in groups.items() for f in fs}
    out = {"functions": order, "groups": {f: group_of[f] for f in order}, "per_symbol": {}}
    pair_sums: dict[str, list[float]] = {}
    for s in symbols:
        inputs = [f"{f} {symbols[functions[f].index(s)]}" for f in order]   # f(x) = s
        feats = torch.nn.functional.normalize(classifier.features(inputs).float(), dim=-1)
        sim = (feats @ feats.T).tolist()
        out["per_symbol"][s] = sim
        for i, f in enumerate(order):
            for j, g in enumerate(order):
                if i < j:
                    key = "within" if group_of[f] == group_of[g] else "between"
                    pair_sums.setdefault(key, []).append(sim[i][j])
    out["mean_similarity"] = {k: sum(v) / len(v) for k, v in pair_sums.items()}
    return out


def plot_similarity(result: dict, out: str | Path, symbols: list[str] | None = None) -> Path:
    """One heat map per symbol (figures 3, 9-11), functions ordered by group."""
    from compsuite.eval.reports.plots import pyplot, save

    plt = pyplot()
    syms = symbols or list(result["per_symbol"])
    ncols = min(4, len(syms))
    nrows = -(-len(syms) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.3 * ncols + 0.8, 2.3 * nrows),
                             squeeze=False)
    flat = axes.ravel().tolist()
    for ax in flat[len(syms):]:
        ax.axis("off")
    fns = result["functions"]
    bounds = [i for i in range(1, len(fns)) if result["groups"][fns[i]] != result["groups"][fns[i - 1]]]
    for ax, s in zip(flat, syms):
        im = ax.imshow(result["per_symbol"][s], vmin=-1, vmax=1, cmap="RdBu_r")
        for b in bounds:
            ax.axhline(b - 0.5, color="k", lw=0.6)
            ax.axvline(b - 0.5, color="k", lw=0.6)
        ax.set_title(f"symbol {s}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=flat, shrink=0.8)
    return save(fig, out)


def plot_matrix(matrix: list[list[float | None]], labels: list[str], out: str | Path,
                title: str = "", xlabel: str = "", ylabel: str = "",
                col_labels: list[str] | None = None) -> Path:
    """A heat map with its values written in the cells (figure 6, the S grid)."""
    from compsuite.eval.reports.plots import pyplot, save

    plt = pyplot()
    cols = col_labels or labels
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * len(cols), 0.8 + 0.6 * len(labels)))
    vals = [[float("nan") if v is None else v for v in row] for row in matrix]
    ax.imshow(vals, vmin=0, vmax=1, cmap="viridis")
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if v is None else f"{v:.2f}", ha="center", va="center",
                    fontsize=7, color="w" if (v or 0) < 0.6 else "k")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, fontsize=8)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return save(fig, out)
