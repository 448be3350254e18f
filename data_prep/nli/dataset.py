"""The NLI study's datasets, as the suite's runner asks for them (``compsuite run nli``):
where a dataset's pairs come from (:class:`~compsuite.data_prep.nli.corpus.Source`),
where it is built, and the build itself (:func:`compsuite.data_prep.nli.corpus.build`).

* ``corpus: synthetic``: the seeded synthetic corpus, written as jsonl with parses to
  ``DATA/nli/synthetic/n<train>-<dev>-<test>/seed<D>/text/`` (:mod:`.synthetic`); the
  dataset is built beside it (``raw/``, ``adversaries/``, ``lexical/``);
* ``corpus: files``: a user's SNLI / MultiNLI jsonl files (paths from the YAML, which
  may name environment variables); the dataset is built in ``DATA/nli/<dataset>/``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

from compsuite.data_prep.common.paths import resolve_path
from compsuite.foundation.dataset import Dataset

from . import corpus, synthetic
from .corpus import Source

SYNTHETIC_LABEL = "synthetic NLI corpus (scaled down, not SNLI)"


def synthetic_source(data_root: Path, *, n_train: int, n_dev: int, n_test: int, seed: int,
                     write: bool = True) -> Source:
    """The synthetic corpus of these sizes and seed (written unless ``write`` is false
    or its manifest matches)."""
    text = Path(data_root) / "nli" / "synthetic" / f"n{n_train}-{n_dev}-{n_test}" / \
        f"seed{seed}" / "text"
    if write:
        synthetic.write(text, seed, n_train, n_dev, n_test)
    return Source("synthetic", [text / "train.jsonl"], text / "dev.jsonl",
                  {"synthetic": text / "test.jsonl"}, label=SYNTHETIC_LABEL)


def files_source(name: str, *, train: Sequence[str], valid: str, evals: Mapping[str, str],
                 lexical_train: Sequence[str] = (), where: str,
                 base: str | os.PathLike | None = None, check: bool = True) -> Source:
    """A dataset of the user's files.  ``where``: the YAML's ``…data`` (errors name
    ``where.datasets.<name>.train`` and the like); ``base``: where relative paths are
    taken from; ``check``: an unset variable or a missing file is an error."""
    def path(value: str, key: str) -> Path:
        return resolve_path(value, key, base=base, check=check)

    w = f"{where}.datasets.{name}"
    return Source(name, [path(p, f"{w}.train") for p in train], path(valid, f"{w}.valid"),
                  {k: path(v, f"{w}.evals.{k}") for k, v in evals.items()},
                  label=f"{name} (user files)",
                  lexical_train=[path(p, f"{where}.lexical_train") for p in lexical_train])


def dataset_root(source: Source, data_root: Path) -> Path:
    """Where a dataset is built: beside the synthetic corpus's text, or
    ``DATA/nli/<dataset>/``."""
    if source.name == "synthetic":
        return source.valid.parent.parent
    return Path(data_root) / "nli" / source.name


def build(source: Source, data_root: Path, *, rules: str = "strict", seed: int = 1,
          pools: bool = False, lexical: Mapping | None = None, show: bool = True) -> Dataset:
    """The dataset of ``source`` built (:func:`compsuite.data_prep.nli.corpus.build`) in
    :func:`dataset_root`, as the toolkits read it."""
    root = dataset_root(source, data_root)
    corpus.build(root, source, rules=rules, seed=seed, pools=pools, lexical=dict(lexical or {}),
                 show=show)
    return Dataset(root, splits=corpus.splits_of(source, pools), label=source.label,
                   allow_unknown=True, layout="sentence_pair")


def reference(sample: Path, root: Path, *, seed: int = 1, show: bool = True) -> dict | None:
    """The reference-sample analysis (:func:`compsuite.data_prep.nli.corpus.
    reference_analysis`) in ``root/reference/``; None when the sample is absent."""
    if not Path(sample).is_file():
        return None
    return corpus.reference_analysis(sample, Path(root) / "reference", seed=seed, show=show)
