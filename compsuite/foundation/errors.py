"""The suite's user-facing errors.

The command line turns a :class:`UserError` into a one-line message (``compsuite:
error: ...``, exit 1): the message names the file, key or line at fault and says what
to do.  Every other exception is a bug in the suite and keeps its traceback.

Each class also derives from the built-in exception a caller would expect
(``ValueError`` for bad input, ``KeyError`` for an unknown name, ``RuntimeError`` for
a failed toolkit command), so library users can catch either.
"""
from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave the suite, or a state the user must resolve."""


class ConfigError(UserError, ValueError):
    """A malformed or inconsistent configuration (YAML files, options, settings)."""


class ToolkitError(UserError, RuntimeError):
    """A toolkit command failed, or a run folder holds another configuration's run;
    the message says where the log is."""


class DataError(UserError, ValueError):
    """Bad input data; the message names the file and, where known, the line."""


class RegistryError(UserError, KeyError):
    """An unknown or duplicate name (a study, run, profile, evaluation, backend); the
    message lists the known names and the nearest one."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
