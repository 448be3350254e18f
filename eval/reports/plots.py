"""PNG plots (matplotlib, headless, written atomically): every figure of every report."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping


def pyplot():
    """matplotlib's pyplot on the headless Agg backend, its debug logging silenced
    (the toolkits set the root logger low)."""
    import logging

    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # before the import logs
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, out: str | Path) -> Path:
    """Write a figure atomically and close it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name("." + out.name + ".tmp.png")
    fig.savefig(tmp, dpi=120)
    fig.clf()
    pyplot().close(fig)
    tmp.replace(out)
    return out


FEATURE_LABELS = {"length": "input length (tokens)", "n_functions": "number of functions",
                  "depth": "depth"}


def accuracy_by_feature(series: Mapping[str, Mapping[str, Mapping]], out: str | Path,
                        title: str = "", min_n: int = 5,
                        labels: Mapping[str, str] | None = None) -> Path:
    """One panel per feature (the paper's Figure 7), one line per model.

    ``series``: model label -> feature -> {value: {"accuracy", "n"}}.  Points with
    fewer than ``min_n`` examples are left out (they are noise).
    """
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()

    labels = labels or FEATURE_LABELS
    features = [f for f in labels if any(f in s for s in series.values())]
    if not features:
        raise ValueError("no breakdown to plot (were sources available?)")
    fig, axes = plt.subplots(1, len(features), figsize=(4.2 * len(features), 3.4), squeeze=False)
    for ax, feat in zip(axes[0], features):
        for label, s in series.items():
            pts = sorted((int(k), v["accuracy"]) for k, v in s.get(feat, {}).items()
                         if v["n"] >= min_n)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(labels[feat])
        ax.set_ylabel("sequence accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save(fig, out)


def accuracy_per_function(series: Mapping[str, Mapping[str, float]], out: str | Path) -> Path:
    """Grouped bars: accuracy per function (the paper's Figure 8), one bar per model."""
    plt = pyplot()
    functions = list(next(iter(series.values())))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(functions)), 3.4))
    for i, (label, acc) in enumerate(series.items()):
        ax.bar([j + i * width for j in range(len(functions))], [acc[f] for f in functions],
               width=width, label=label)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(functions))])
    ax.set_xticklabels(functions, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("sequence accuracy")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, out)


def overgeneralisation_areas(result: dict, out: str | Path, title: str = "") -> Path:
    """Stacked areas of memorisation, overgeneralisation and neither over training
    (a result of :func:`compsuite.eval.overgeneralisation.track`)."""
    plt = pyplot()
    rows = result["profile"]
    xs = [r["at"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.stackplot(xs, [r["memorisation"] for r in rows], [r["overgeneralisation"] for r in rows],
                 [r["neither"] for r in rows], labels=["memorisation", "overgeneralisation",
                                                      "neither"], alpha=0.8)
    ax.set_xlabel(rows[0]["kind"])
    ax.set_ylabel("share of exception inputs")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="upper right")
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return save(fig, out)


def similarity_maps(result: dict, out: str | Path, symbols: list[str] | None = None) -> Path:
    """One heat map per symbol, functions ordered by group (CTL++ figures 3, 9-11; a
    result of :func:`compsuite.eval.ctlpp.representation_similarity`)."""
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
    bounds = [i for i in range(1, len(fns))
              if result["groups"][fns[i]] != result["groups"][fns[i - 1]]]
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


def heat_map(matrix: list[list[float | None]], labels: list[str], out: str | Path,
             title: str = "", xlabel: str = "", ylabel: str = "",
             col_labels: list[str] | None = None) -> Path:
    """A heat map with its values written in the cells (CTL++ figure 6, the S grid)."""
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
