"""The paradox study's data folders, as the suite's runner asks for them
(``compsuite run paradox``), under ``DATA/paradox/``:

* ``generated/train<N>/seed<D>/`` (:func:`build_generated`): ``text/`` (the generated
  corpus, :mod:`.corpus`), ``raw/`` (``{train,valid,test}.{src,tgt}`` for the toolkits)
  and ``tests/`` (the test sets, :mod:`.testsets`);
* ``opus/<size>/seed<D>/`` (:func:`build_opus`): ``tok/``, ``raw/`` and ``text/flores/``
  (the user's OPUS corpus prepared, Flores-101 devtest as plain text:
  :func:`compsuite.data_prep.paradox.opus.prepare`) and ``tests/``; ``opus/bpe-codes/``:
  the BPE codes learnt once on the whole corpus, which every size applies.

Each part is skipped when its manifest matches.  ``tests``: the keyword arguments of
:func:`write_tests` (``n``, ``seed``, ``semi_natural``, ``natural``, ``idioms``).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any, Mapping

from compsuite.foundation.dataset import Dataset

from . import corpus, items, opus, testsets


def quick_items(idioms: str = "table7"):
    """The idioms the test sets use: the generated corpus's four (``quick``), or None for
    Table 7's (``table7``, the test builder's default)."""
    return corpus.quick_idioms() if idioms == "quick" else None


def item_tables(idioms: str = "table7") -> tuple[dict, dict]:
    """Synonym name -> Dutch forms, idiom name -> keywords, for the profile's items."""
    synonym_forms = {s.name: s.forms for s in items.synonyms()}
    chosen = corpus.quick_idioms() if idioms == "quick" else items.idioms()
    return synonym_forms, {i.name: i.keywords for i in chosen}


def write_tests(out: Path, *, seed: int = 1, n: int = 500, semi_natural: str | None = None,
                natural: str | None = None, idioms: str = "table7") -> dict:
    """The test sets of every condition (:func:`compsuite.data_prep.paradox.testsets.write`)
    with the profile's idioms."""
    return testsets.write(out, seed, n, semi_natural=semi_natural, natural=natural,
                          idiom_label=idioms, idiom_items=quick_items(idioms))


def build_opus(data_root: Path, size: str, paths: Mapping[str, Path], *, seed: int = 1,
               merges: int = 60000, small_pairs: int = opus.SMALL_PAIRS, jobs: int = 1,
               tests: Mapping[str, Any], show: bool = True) -> Dataset:
    """``DATA/paradox/opus/<size>/seed<D>/``: ``tok/``, ``raw/`` and ``text/flores/`` (the
    prepared corpus, from ``paths["en"]``, ``paths["nl"]`` and the Flores-101 folder
    ``paths["flores"]``) and ``tests/``; the BPE codes come from ``opus/bpe-codes/``
    (learnt on the whole corpus once, shared by the sizes as the authors' one code
    file)."""
    root = Path(data_root) / "paradox" / "opus" / size / f"seed{seed}"
    if show:
        print(f"paradox data: {root}", file=sys.stderr, flush=True)
    opus.prepare(paths["en"], paths["nl"], paths["flores"], root, size=size, seed=seed,
                 merges=merges, small_pairs=small_pairs, jobs=jobs,
                 codes=Path(data_root) / "paradox" / "opus" / "bpe-codes", show=show)
    write_tests(root / "tests", **tests)
    return Dataset(root, label=f"paradox OPUS {size} seed{seed}",
                   splits=("train", "valid", "test"), allow_unknown=True,
                   joined_dictionary=True)


def build_generated(data_root: Path, *, data_seed: int, n_train: int, n_valid: int,
                    n_test: int, tests: Mapping[str, Any], show: bool = True) -> Dataset:
    """``DATA/paradox/generated/train<N>/seed<D>/``: ``text/`` (the corpus), ``raw/`` (as
    ``{train,valid,test}.{src,tgt}`` for the toolkits) and ``tests/`` (the test sets),
    each skipped when its manifest matches."""
    size = f"train{n_train}"
    root = Path(data_root) / "paradox" / "generated" / size / f"seed{data_seed}"
    if show:
        print(f"paradox data: {root}", file=sys.stderr, flush=True)
    corpus.write(root / "text", data_seed, n_train, n_valid, n_test)
    write_raw(root, data_seed)
    write_tests(root / "tests", **tests)
    # a small corpus's valid/test may hold a word its train split lacks (the model maps
    # it to <unk>, as it does for a test input's unseen word)
    return Dataset(root, label=f"paradox generated {size} seed{data_seed}",
                   splits=("train", "valid", "test"), allow_unknown=True)


def write_raw(root: Path, data_seed: int) -> None:
    """``raw/{split}.{src,tgt}``: copies of ``text/{split}.{en,nl}`` (the generated text
    is already what the model reads), rewritten only where they differ, with a
    manifest."""
    from compsuite.foundation.io import sha256_file
    from compsuite.foundation.manifest import read_manifest, write_manifest

    raw = root / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    files = []
    for split in ("train", "valid", "test"):
        for src, dst in (("en", "src"), ("nl", "tgt")):
            target = raw / f"{split}.{dst}"
            source = root / "text" / f"{split}.{src}"
            if not target.is_file() or target.read_bytes() != source.read_bytes():
                shutil.copyfile(source, target)
            files.append(target.name)
    if read_manifest(raw) is None or set(read_manifest(raw)["sha256"]) != set(files) or any(
            sha256_file(raw / f) != d for f, d in read_manifest(raw)["sha256"].items()):
        write_manifest(raw, generator="paradox.raw", generator_version="1", seed=data_seed,
                       args={"text": str(root / "text")}, files=files)
