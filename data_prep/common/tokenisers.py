"""Tokenisers that several modules share (data preparation and evaluation alike).

:func:`sudachi`: a SudachiPy tokenizer (split mode and dictionary), built once per
thread and reused: the one definition, for word segmentation of Japanese before
subword encoding, for segmenting Japanese for BLEU and for reading word lemmas.  One
per thread, because a SudachiPy tokenizer is a Rust object that raises
``RuntimeError: Already borrowed`` when two threads tokenize with it at once (see
:mod:`compsuite.threadcache`).
"""
from __future__ import annotations

from compsuite.threadcache import per_thread

#: Sudachi's split modes, shortest units first
SUDACHI_MODES = ("A", "B", "C")


def sudachi(mode: str = "C", dict_name: str = "core"):
    """The SudachiPy tokenizer of split ``mode`` (A, B or C; any case) with the
    ``dict_name`` dictionary (``core``: the sudachidict-core package), one per thread;
    a ValueError for an unknown mode."""
    if not isinstance(mode, str) or mode.upper() not in SUDACHI_MODES:
        raise ValueError(f"unknown Sudachi split mode {mode!r} (A, B or C)")
    return _sudachi_tokenizer(mode.upper(), dict_name)


@per_thread
def _sudachi_tokenizer(mode: str, dict_name: str):
    from sudachipy import Dictionary, SplitMode

    return Dictionary(dict=dict_name).create(getattr(SplitMode, mode))

