"""A dataset as every layer passes it on: its folder, the raw text the toolkits read
(``raw/{split}.{src,tgt}`` + ``manifest.json``) and the toolkit-format folders written
from it.  A study's ``prepare`` returns one (``docs/adding_a_study.md``, "Datasets");
the toolkit backends write their formats from it and train on it."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .manifest import read_manifest


@dataclass
class Dataset:
    """One dataset: its raw text (``raw/{split}.{src,tgt}`` + ``manifest.json``) and the
    toolkit-format folders written from it (``formats``: toolkit -> folder)."""

    root: Path
    splits: tuple[str, ...] = ("train", "valid", "test")
    label: str = ""
    formats: dict[str, Path] = field(default_factory=dict)
    #: test splits may hold tokens the training split lacks (open-vocabulary subwords:
    #: the toolkit maps them to its unknown token) instead of that being an error
    allow_unknown: bool = False
    #: one source-and-target vocabulary (fairseq's --joined-dictionary), for models that
    #: share all embeddings (--share-all-embeddings)
    joined_dictionary: bool = False
    #: the raw files' shape: ``text_to_text`` (``raw/{split}.{src,tgt}``) or
    #: ``sentence_pair`` (``raw/{split}.{premise,hypothesis,label}``, a pair classified)
    layout: str = "text_to_text"
    #: the same splits as plain, untokenised text (``{split}.src``, ``{split}.tgt``), for
    #: models that bring their own tokenizer (the hf backend); None: the dataset has none
    text: Path | None = None

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    def folder(self, toolkit: str) -> Path:
        """The folder in ``toolkit``'s format (an error if it was not written)."""
        if toolkit not in self.formats:
            raise ConfigError(f"{self.root}: no {toolkit} data was prepared "
                              f"(have: {', '.join(self.formats) or 'raw text only'})")
        return self.formats[toolkit]

    def checksum(self) -> str | None:
        """A digest of the raw files' checksums in the manifest (stable across
        regenerations of the same data, unlike the manifest's creation time)."""
        m = read_manifest(self.raw)
        return None if m is None else digest(m)


def digest(manifest: dict) -> str:
    """A digest of a manifest's file checksums (:meth:`Dataset.checksum`)."""
    return hashlib.sha256(json.dumps(manifest.get("sha256", {}), sort_keys=True).encode()
                          ).hexdigest()
