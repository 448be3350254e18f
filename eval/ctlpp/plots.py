"""CTL++'s own figure: the representation similarity maps (figures 3, 9-11; the
generic plots, such as the heat maps of figure 6 and the S grid, are in
:mod:`compsuite.eval.reports.plots`)."""
from __future__ import annotations

from pathlib import Path

from compsuite.eval.reports.plots import pyplot, save


def similarity_maps(result: dict, out: str | Path, symbols: list[str] | None = None) -> Path:
    """One heat map per symbol, functions ordered by group (CTL++ figures 3, 9-11; a
    result of :func:`compsuite.eval.ctlpp.analyses.representation_similarity`)."""
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
