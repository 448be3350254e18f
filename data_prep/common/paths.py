"""Paths a study's YAML names: ``~`` and environment variables expanded (``${CORPUS_DIR}``),
errors naming the YAML key.  One helper for every study whose profile points at the
user's files."""
from __future__ import annotations

import os
import re
from pathlib import Path

from compsuite.foundation.errors import ConfigError

_VAR = re.compile(r"\$\{?(\w+)\}?")


def resolve_path(value: str, where: str, *, base: str | os.PathLike | None = None,
                 check: bool = True) -> Path:
    """A YAML path with ``~`` and environment variables expanded.

    ``base``: a relative path (one that names no unset variable) is taken from there
    (absent: from the working folder).  ``check``: an unset variable or a path that
    does not exist is a ConfigError naming ``where`` (the file and key); without it the
    expanded path is returned as it is."""
    expanded = os.path.expanduser(os.path.expandvars(value))
    if base is not None and not os.path.isabs(expanded) and "$" not in expanded:
        value = expanded = str(Path(base) / expanded)
    if not check:
        return Path(expanded)
    unset = _VAR.findall(expanded)
    if unset:
        raise ConfigError(f"{where}: '{value}' names the environment variable "
                          f"{unset[0]}, which is not set (export it, or put the path in the "
                          "YAML)")
    path = Path(expanded)
    if not path.exists():
        raise ConfigError(f"{where}: {path}: no such file or folder")
    return path
