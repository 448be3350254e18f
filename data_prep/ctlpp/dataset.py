"""CTL++'s data folders, as the suite's runner asks for them (``compsuite run ctlpp``).

``DATA/ctlpp/<variant or S cell>/<size>/seed<S>/raw/`` (:func:`build_dataset`): the
generator's ``{train,valid,test_iid,test_ood}.{src,tgt}`` (and the same pairs as
``.tsv``) with ``manifest.json``.  ``<variant or S cell>`` is ``A``, ``R`` or
``S-f<K>-s<M>`` (:func:`s_cell`: the S variant with K shared functions and M shared
symbols); ``<size>`` names every size that differs from the paper's
(:func:`size_name`), so two task sizes never share a folder.
"""
from __future__ import annotations

import re
from pathlib import Path

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.manifest import is_complete

from .generate import GENERATOR, SPLITS, CTLConfig, generate

VARIANT_NAMES = {"A": "alternating", "R": "repeating", "S": "shared functions"}
#: the CTLConfig fields the plan sets (a profile's ``data:`` sets the others)
PLAN_FIELDS = ("variant", "shared_functions", "shared_symbols")
S_CELL = re.compile(r"^S-f(\d+)-s(\d+)$")


def s_cell(shared_functions: int, shared_symbols: int) -> str:
    """The dataset name of one cell of the S grid: ``S-f<K>-s<M>``."""
    return f"S-f{shared_functions}-s{shared_symbols}"


def config(dataset: str, sizes: dict) -> CTLConfig:
    """The generator's config of a dataset name (a variant or an S cell) with the
    profile's ``sizes`` (CTLConfig fields but those of :data:`PLAN_FIELDS`)."""
    cell = S_CELL.match(dataset)
    variant = "S" if cell else dataset
    kw = {"shared_functions": int(cell[1]), "shared_symbols": int(cell[2])} if cell else {}
    return CTLConfig(**{**sizes, **kw, "variant": variant})


def size_name(cfg: CTLConfig) -> str:
    """``n<n_train>`` and a tag for every size that differs from the paper's (a
    scaled-down task gets its own folder)."""
    default = CTLConfig(variant=cfg.variant)
    return f"n{cfg.n_train}" + "".join(
        f"-{tag}{getattr(cfg, key)}" for key, tag in
        (("n_symbols", "sym"), ("n_functions", "f"), ("max_length", "len"))
        if getattr(cfg, key) != getattr(default, key)) + (
        "-singles" if cfg.single_applications else "")


def build_dataset(data_root: Path, dataset: str, seed: int, sizes: dict,
                  show: bool = True) -> Dataset:
    """``DATA/ctlpp/<dataset>/<size>/seed<S>/``, generated unless its manifest matches."""
    cfg = config(dataset, sizes)
    size = size_name(cfg)
    data = Dataset(Path(data_root) / "ctlpp" / dataset / size / f"seed{seed}", SPLITS,
                   f"CTL++ variant {cfg.variant} ({VARIANT_NAMES[cfg.variant]}), {size}")
    if not is_complete(data.raw, GENERATOR, cfg.as_args()):
        generate(data.raw, cfg, seed=seed, progress=show)
    return data
