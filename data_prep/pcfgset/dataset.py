"""PCFG SET's data folders, as the suite's runner asks for them (``compsuite run
pcfgset``), and the corpora ``compsuite data pcfgset generate`` writes.

* ``DATA/pcfgset/<dataset>/seed<S>/raw/`` (:func:`task_dataset`): the base corpus
  ``{train,valid,test}.{src,tgt}`` of a configuration (:data:`~.CONFIGS`);
* ``DATA/pcfgset/<dataset>/<test>/seed<S>/raw/`` (:func:`dataset_for_test`): a
  compositionality test's splits (:data:`~.splits.TESTS`) with their extra files under
  the released data's names (``test_twin.src``, ``unrolled_test.tsv``, ...).

Each is generated unless its manifest matches.  :func:`check_same_corpus`: a test on
the task model must draw its samples from the task's own training corpus.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.io import sha256_file
from compsuite.foundation.manifest import is_complete, read_manifest

from . import CONFIGS
from .generate import GENERATOR, GENERATOR_VERSION, generate
from .splits import SPLIT_GENERATOR, TESTS


def task_dataset(data_root: Path, dataset: str, config: str, label: str, seed: int,
                 show: bool = True) -> Dataset:
    """``DATA/pcfgset/<dataset>/seed<S>/``: the base corpus of ``config``."""
    cfg = CONFIGS[config]
    data = Dataset(Path(data_root) / "pcfgset" / dataset / f"seed{seed}", label=label)
    if not is_complete(data.raw, GENERATOR, cfg.as_args(), version=GENERATOR_VERSION):
        generate(data.raw, cfg, seed=seed, progress=show)
    return data


def dataset_for_test(data_root: Path, dataset: str, config: str, label: str, test: str,
                 split: str, options: Mapping[str, Any], seed: int,
                 show: bool = True) -> Dataset:
    """``DATA/pcfgset/<dataset>/<test>/seed<S>/``: the splits of the test ``test``
    (generator ``split`` with ``options``) over the base corpus of ``config``."""
    cfg = CONFIGS[config]
    data = Dataset(Path(data_root) / "pcfgset" / dataset / test / f"seed{seed}", label=label)
    m = read_manifest(data.raw)
    done = (m is not None and m.get("seed") == seed and m["args"].get("test") == split
            and m["args"].get("base") == cfg.as_args()
            and all(m["args"].get(k) == v for k, v in options.items())
            and is_complete(data.raw, SPLIT_GENERATOR, m["args"], version=GENERATOR_VERSION))
    if not done:
        TESTS[split](data.raw, cfg, seed=seed, progress=show, **options)
    return data


def check_same_corpus(test_raw: Path, task_raw: Path, test: str) -> None:
    """A test on the task model must draw its samples from the task's own corpus."""
    for name in ("train.src", "train.tgt"):
        if (test_raw / name).is_file() and sha256_file(test_raw / name) != sha256_file(
                task_raw / name):
            raise ConfigError(f"test '{test}': {test_raw / name} differs from the task corpus "
                              f"{task_raw / name}; its samples would not come from the task "
                              "model's training data")


def write_corpus(raw: Path, config: str = "full", seed: int = 1, n_pairs: int | None = None,
                 test: str | None = None, options: Mapping[str, Any] | None = None,
                 progress: bool = True) -> dict:
    """The base corpus of ``config`` (or, with ``test``, that test's splits with
    ``options``) in ``raw``; returns its manifest.  ``n_pairs`` overrides the config's
    number of distinct pairs.  (``compsuite data pcfgset generate`` has the toolkits
    write their formats beside it: :func:`compsuite.toolkits.write_with_toolkits`.)"""
    cfg = CONFIGS[config]
    if n_pairs is not None:
        if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
            raise ConfigError(f"n_pairs must be a positive integer, not {n_pairs!r}")
        cfg = replace(cfg, n_pairs=n_pairs)
    if test:
        return TESTS[test](raw, cfg, seed=seed, **(options or {}))
    return generate(raw, cfg, seed=seed, progress=progress)
