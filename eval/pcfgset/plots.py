"""PCFG SET's own figure: memorisation against overgeneralisation over training
(the generic plots are in :mod:`compsuite.eval.reports.plots`)."""
from __future__ import annotations

from pathlib import Path

from compsuite.eval.reports.plots import pyplot, save


def overgeneralisation_areas(result: dict, out: str | Path, title: str = "") -> Path:
    """Stacked areas of memorisation, overgeneralisation and neither over training
    (a result of :func:`compsuite.eval.pcfgset.overgeneralisation.track`)."""
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
