"""Value types of command-line options (argparse's ``type=``), for every command the
suite has (``compsuite ...``, the data generators' own entry points): a wrong value is
argparse's one-line error saying what was expected."""
from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse ``type`` for sizes and counts: an integer above zero (0 and negative
    numbers are errors, never "the default")."""
    return number(int, text, lambda v: v > 0, "a positive integer")


def non_negative_int(text: str) -> int:
    """An argparse ``type``: an integer of zero or more."""
    return number(int, text, lambda v: v >= 0, "an integer of 0 or more")


def positive_float(text: str) -> float:
    """An argparse ``type`` for rates and scales: a number above zero."""
    return number(float, text, lambda v: v > 0, "a positive number")


def command_line(text: str) -> str:
    """An argparse ``type`` for ``--model-cmd``: a command, not an empty string (which
    would otherwise be taken as no program at all)."""
    if not text.strip():
        raise argparse.ArgumentTypeError('expected a command, e.g. "python my_model.py", '
                                         "not an empty string")
    return text


def folder_path(text: str) -> str:
    """An argparse ``type`` for a folder option: a path, not an empty string."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, not an empty string")
    return text


def number(kind: type, text: str, fits, what: str):
    """``kind(text)`` if it ``fits``, else argparse's error saying ``what`` was expected."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
    if not fits(value):
        raise argparse.ArgumentTypeError(f"expected {what}, not {text}")
    return value
