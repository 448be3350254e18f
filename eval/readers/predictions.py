"""Readers for model outputs, all to one in-memory form
(:class:`compsuite.models.predictions.Predictions`; fairseq-generate's output is read by
the fairseq backend, :mod:`compsuite.toolkits.fairseq.predictions`).

* plain files: one hypothesis per line beside one reference per line (OpenNMT-py's
  ``onmt_translate -output`` file is such a hypothesis file), optionally sources;
* TSV with a ``source<TAB>target<TAB>prediction`` header, the format in which the
  PCFG SET authors released their models' predictions.

Every reader checks alignment: mismatched line counts, empty files, missing headers
or malformed lines raise :class:`~compsuite.foundation.errors.DataError` naming
the file and line.
"""
from __future__ import annotations

from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_lines
from compsuite.models.predictions import Predictions


TSV_HEADER = ("source", "target", "prediction")


def read_tsv(path: str | Path) -> Predictions:
    """A TSV file whose first line is the header ``source target prediction``."""
    lines = read_lines(path)
    header = tuple(h.strip().lower() for h in lines[0].split("\t"))
    if header != TSV_HEADER:
        raise DataError(
            f"{path}: line 1 must be the header 'source<TAB>target<TAB>prediction', "
            f"found {lines[0][:80]!r}"
        )
    if len(lines) == 1:
        raise DataError(f"{path}: header only, no predictions")
    srcs, refs, hyps = [], [], []
    for i, line in enumerate(lines[1:], start=2):
        parts = line.split("\t")
        if len(parts) != 3:
            raise DataError(f"{path}: line {i} has {len(parts)} tab-separated fields, expected 3")
        srcs.append(parts[0].strip())
        refs.append(parts[1].strip())
        hyps.append(parts[2].strip())
    return Predictions(hyps, refs, srcs, {"format": "tsv", "file": str(path)})


