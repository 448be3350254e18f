"""The paradox report's figures (analogues of the paper's Figures 1-3): overgeneralisation
over training per data type, and per-group dots with their mean as a bar."""
from __future__ import annotations

import statistics as st
from pathlib import Path

from compsuite.eval.reports.plots import pyplot, save

#: the data types in the paper's order (panels and table rows)
DATA_ORDER = ("synthetic", "semi_natural", "natural", "random")


def plot_overgeneralisation(og: dict, out: Path, title: str = "",
                            units: dict | None = None) -> Path:
    """Figure 3: per (size, data type) panel, each idiom and their mean over training;
    ``units``: size -> "update" or "epoch" (the x axis)."""
    plt = pyplot()
    panels = sorted({(size, data) for size, data, _, match in og if match == "word"},
                    key=lambda k: (k[0], DATA_ORDER.index(k[1]) if k[1] in DATA_ORDER else 9))
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4 * max(1, len(panels)), 3.4),
                             squeeze=False, sharey=True)
    for ax, (size, data) in zip(axes[0], panels):
        curves = []
        for (s, d, idiom, match), v in sorted(og.items()):
            if (s, d, match) != (size, data, "word") or not v["steps"]:
                continue
            ys = [st.fmean([row[i] for row in v["per_seed"].values() if row[i] is not None])
                  for i in range(len(v["steps"]))]
            ax.plot(v["steps"], ys, linewidth=1, alpha=0.6, label=idiom)
            curves.append((v["steps"], ys))
        if curves:
            steps = curves[0][0]
            mean = [st.fmean(c[1][i] for c in curves if len(c[1]) > i) for i in range(len(steps))]
            ax.plot(steps, mean, color="black", linewidth=2.5, label="mean")
        ax.set_title(f"{data} ({size})")
        ax.set_xlabel(f"{(units or {}).get(size, 'update')}s")
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel("overgeneralisation")
    axes[0][-1].legend(fontsize=6, loc="upper right")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save(fig, out)


def plot_points(groups: dict[str, list[float]], out: Path, title: str) -> Path:
    """One column per group: its values as dots (templates or synonyms) and their mean as
    a bar (Figures 1 and 2 of the paper show the same)."""
    plt = pyplot()
    labels = list(groups)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(labels)), 3.6))
    for i, label in enumerate(labels):
        vals = groups[label]
        ax.bar(i, st.fmean(vals), color="#9ecae1", width=0.6)
        ax.scatter([i] * len(vals), vals, s=12, color="#08519c", zorder=3)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("consistency")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return save(fig, out)
