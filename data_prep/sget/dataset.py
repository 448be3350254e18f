"""SGET's datasets as the suite trains on them: generated (or released) text, its
Sudachi + sentencepiece encoding and the encoded corpus the toolkits read.

``DATA/sget/<part>/<size>/seed<D>/`` (the released data: ``DATA/sget/released/<name>/``)
holds, each folder with its ``manifest.json`` and skipped when that matches:

* ``text/``: the generator's ``{train,dev,test,gen}.txt`` (``english<TAB>japanese<TAB>
  pattern``) and ``gen_info.tsv`` (:mod:`compsuite.data_prep.sget.generate`; the released
  data are read from their own folder instead);
* ``encoded/``: the output of ``compsuite data sget prepare``
  (:func:`compsuite.data_prep.sget.preprocess.prepare`): ``{split}.en`` and
  ``{split}.ja``, the encoded pieces in the format of the released
  ``*_encoded_sp.txt``; ``text/{split}.{en,ja,pattern}``, the plain text as read (what
  the evaluation scores against); ``sp/``, the two BPE models;
* ``raw/``: the corpus the toolkits read, ``{train,valid,test,gen}.{src,tgt}``
  (English source, Japanese target; ``valid`` is the development set): the encoded
  pieces of ``encoded/``, hard-linked to them where the file system allows (a copy
  otherwise), with a manifest of their own;
* ``plain/``: the same splits as plain text (``{train,valid,test,gen}.{src,tgt}``, hard
  links to ``encoded/text/``), for models with their own tokenizer (``Dataset.text``);
* ``onmt/``: the OpenNMT-py backend's copy and vocabularies (written by the backend).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from compsuite.foundation.errors import DataError

#: part -> (selectional restrictions, concatenated training sentences, what it is for)
PARTS = {
    "main": (True, True, "Tables 2, 3, 10 and 11: the benchmark as published"),
    "no_restrictions": (False, True, "Table 5: without selectional restrictions"),
    "no_concatenation": (True, False, "Tables 6 and 7: without concatenated training "
                                      "sentences"),
}
#: the corpus splits the toolkits see (valid = the development set)
SPLITS = ("train", "valid", "test", "gen")
SOURCE_SPLIT = {"train": "train", "valid": "dev", "test": "test", "gen": "gen"}
CORPUS = "sget.corpus"
#: 2: raw/ hard-linked to encoded/ where it can be, beside the encoding's text/ folder;
#: 3: plain/ beside raw/
CORPUS_VERSION = "3"
#: the plain-text corpus folder (``Dataset.text``)
PLAIN = "plain"
#: the dataset's folder with the Sudachi + sentencepiece encoding
ENCODED = "encoded"


def encoded_text(root: Path) -> Path:
    """The plain text of a dataset's encoding (``encoded/text/``: ``{split}.en``,
    ``{split}.ja``, ``{split}.pattern``), what translations are scored against."""
    from compsuite.data_prep.sget.preprocess import TEXT

    return Path(root) / ENCODED / TEXT


def _size(scale: float) -> str:
    return "full" if scale == 1 else f"scale{scale:g}"


def build_dataset(data_root: Path, part: str, *, scale: float = 1.0, data_seed: int = 1,
                  en_vocab: int | None = None, ja_vocab: int | None = None,
                  released: str | None = None, show: bool = True):
    """``DATA/sget/<part>/<size>/seed<D>/{text,encoded,raw}`` (see the module docstring),
    each step skipped when its manifest matches; returns the
    :class:`~compsuite.foundation.dataset.Dataset`."""
    from compsuite.data_prep.sget import preprocess
    from compsuite.foundation.dataset import Dataset

    if released:
        root, text, label = _released_text(data_root, released)
    else:
        root, text, label = _generated_text(data_root, part, scale, data_seed, show)
    encoded = root / ENCODED
    if show:
        print(f"SGET {part}: Sudachi + sentencepiece -> {encoded}", file=sys.stderr, flush=True)
    manifest = preprocess.prepare(text, encoded, from_released=bool(released),
                                  en_vocab=en_vocab or preprocess.EN_VOCAB,
                                  ja_vocab=ja_vocab or preprocess.JA_VOCAB)
    data = Dataset(root, SPLITS, label, allow_unknown=True, text=root / PLAIN)
    write_corpus(encoded, data.raw, manifest)
    return data


def _released_text(data_root: Path, released: str) -> tuple[Path, Path, str]:
    """The authors' folder: (dataset root, the text folder, the label)."""
    from compsuite.data_prep.sget import preprocess

    src = Path(released).expanduser()
    missing = [f"{s}.txt" for s in preprocess.SPLITS if not (src / f"{s}.txt").is_file()]
    if missing:
        raise DataError(f"{src}: the released SGET folder lacks {', '.join(missing)}")
    root = Path(data_root) / "sget" / "released" / src.resolve().name
    return root, src, f"SGET released data ({src})"


def _generated_text(data_root: Path, part: str, scale: float, data_seed: int,
                    show: bool) -> tuple[Path, Path, str]:
    """The generator's text for a part (written unless its manifest matches): (dataset
    root, the text folder, the label)."""
    from compsuite.data_prep.sget.generate import GENERATOR, GENERATOR_VERSION, generate
    from compsuite.foundation.manifest import is_complete

    restrictions, concatenation, what = PARTS[part]
    root = Path(data_root) / "sget" / part / _size(scale) / f"seed{data_seed}"
    text = root / "text"
    args = {"seed": data_seed, "restrictions": restrictions,
            "concatenation": concatenation, "scale": scale}
    if not is_complete(text, GENERATOR, args, version=GENERATOR_VERSION):
        generate(text, seed=data_seed, restrictions=restrictions,
                 concatenation=concatenation, scale=scale, show=show)
    label = (f"SGET {part} ({what.split(':')[-1].strip()}), generated, "
             f"{_size(scale)}, data seed {data_seed}")
    return root, text, label


def write_corpus(encoded: Path, raw: Path, encoded_manifest: dict) -> None:
    """The encoded text as ``raw/{train,valid,test,gen}.{src,tgt}`` (English source,
    Japanese target) with a manifest; skipped when it matches.  Each file is a hard
    link to its ``encoded/`` file (the same bytes, no second copy) where the file
    system allows one, else a copy; either way it is put in place atomically."""
    from compsuite.foundation.manifest import is_complete, write_manifest

    args = {"encoded": str(encoded.resolve()),
            "encoded_sha256": json.dumps(encoded_manifest.get("sha256", {}), sort_keys=True)}
    if is_complete(raw, CORPUS, args, version=CORPUS_VERSION):
        return
    raw.mkdir(parents=True, exist_ok=True)
    plain = raw.parent / PLAIN
    plain.mkdir(parents=True, exist_ok=True)
    files, counts = [], {}
    for split, name in SOURCE_SPLIT.items():
        for side, lang in (("src", "en"), ("tgt", "ja")):
            link_or_copy(encoded / f"{name}.{lang}", raw / f"{split}.{side}")
            link_or_copy(encoded_text(raw.parent) / f"{name}.{lang}", plain / f"{split}.{side}")
            files.append(f"{split}.{side}")
        counts[split] = encoded_manifest["counts"][name]
    write_manifest(raw, generator=CORPUS, generator_version=CORPUS_VERSION, seed=None,
                   args=args, files=files, counts=counts,
                   extra={"note": "valid = the development set (dev.txt); plain/ holds the "
                                    "same splits as plain text"})


def link_or_copy(src: Path, dst: Path) -> str:
    """``dst`` as a hard link to ``src`` (``"link"``), or a copy where the file system
    refuses the link (``"copy"``: another device, no hard links); an existing ``dst``
    is replaced atomically.  Safe because nothing writes these files in place: every
    writer of the suite writes a new file and renames it (``atomic_open``), which
    leaves the other name with the old bytes, and the corpus manifest's checksums
    catch any change."""
    from compsuite.foundation.io import atomic_open

    if dst.is_file() and os.path.samefile(src, dst):
        return "link"
    tmp = dst.with_name(f".{dst.name}.link.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        with open(src, "rb") as fin, atomic_open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        return "copy"
    try:
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)
    return "link"
