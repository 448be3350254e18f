"""PNG plots (matplotlib, headless, written atomically): the figures several reports
draw; a study's own figures live in its eval/<study>/ package."""
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
    """One panel per feature (e.g. accuracy by input length), one line per model.

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
    """Grouped bars: accuracy per category (e.g. per function), one bar per model."""
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


def heat_map(matrix: list[list[float | None]], labels: list[str], out: str | Path,
             title: str = "", xlabel: str = "", ylabel: str = "",
             col_labels: list[str] | None = None) -> Path:
    """A heat map with its values written in the cells (e.g. accuracy over a grid of
    two settings)."""
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
