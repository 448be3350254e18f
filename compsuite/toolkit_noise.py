"""The toolkits' messages that say nothing to a user of the suite, kept off the terminal
when a toolkit runs in this process (a model in the loop of a test).

The toolkits' own commands (``fairseq-train``, ``-preprocess``, ``-generate``,
``onmt_train``, ``onmt_translate``, ...) run as subprocesses whose output goes to the
run's logs (``train.log``, ``generate-<split>.log``, ...): everything they print stays
there, noise included, and none of it reaches the terminal.  A model loaded in this
process prints to the terminal instead; what it printed on this CPU machine, and what
:func:`import_toolkit` does about it:

* ``import fairseq`` calls ``logging.basicConfig`` (in its wav2vec and text-to-speech
  modules), which gives the root logger a stderr handler at DEBUG: fairseq's "Please
  install tensorboardX" line, and from then on every INFO or DEBUG record of any library
  (fairseq's, the suite's plugins', matplotlib's...), reached the terminal.  The import
  here leaves the root logger as it found it (a handler held on it for the duration
  makes ``basicConfig`` a no-op), so records go where the application configured them
  (Python's default: warnings and errors on stderr, nothing else).
* OpenNMT-py's inference engine gives its ``onmt`` logger a console handler at INFO on
  every model loaded ("Loading checkpoint from ...", "Loading data into the model"):
  a filter on that logger (:class:`BelowWarning`) keeps its warnings and errors only.
* Warnings (:data:`WARNINGS`), ignored by message, category and module, nothing broader:
  torch's DataLoader on every inference batch iterator of both toolkits
  ("'pin_memory' argument is set as true but no accelerator is found"), OpenNMT-py's
  import (torch's FutureWarning on ``torch.cuda.amp.custom_fwd/custom_bwd``), and
  torch's remark on dropout in a one-layer LSTM when such a model is loaded (dropout is
  off at inference; the training's log keeps the remark).

Any other warning, and every error, still shows.
"""
from __future__ import annotations

import importlib
import logging
import warnings
from contextlib import contextmanager
from typing import Iterator

#: (category, message regex, module regex): the warnings :func:`filter_warnings` ignores
WARNINGS = (
    (UserWarning, r"'pin_memory' argument is set as true but no accelerator is found",
     r"torch\.utils\.data"),
    (FutureWarning, r"`torch\.cuda\.amp\.custom_(fwd|bwd)\(args\.\.\.\)` is deprecated",
     r"onmt\."),
    (UserWarning, r"dropout option adds dropout after all but last recurrent layer",
     r"torch\.nn\.modules\.rnn"),
)
#: the loggers that the toolkits log every model load and batch on, kept to warnings
LOGGERS = ("fairseq", "fairseq_plugins", "onmt")


class BelowWarning(logging.Filter):
    """Drops a logger's records below WARNING (whatever level the toolkit set on it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING


def filter_warnings() -> None:
    """Ignore :data:`WARNINGS` (idempotent: each filter is added once)."""
    for category, message, module in WARNINGS:
        if not any(f[0] == "ignore" and f[2] is category and
                   getattr(f[1], "pattern", None) == message and
                   getattr(f[3], "pattern", None) == module for f in warnings.filters):
            warnings.filterwarnings("ignore", message=message, category=category, module=module)


def quiet_loggers(*names: str) -> None:
    """Keep the named loggers to warnings and errors: their level, and a
    :class:`BelowWarning` filter that outlives a toolkit resetting the level."""
    for name in names or LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        if not any(isinstance(f, BelowWarning) for f in logger.filters):
            logger.addFilter(BelowWarning())


@contextmanager
def root_logging_kept() -> Iterator[None]:
    """Whatever the block does, the root logger keeps its handlers and level
    (``logging.basicConfig`` called inside is a no-op)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    holder = logging.NullHandler()
    root.addHandler(holder)
    try:
        yield
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)


def import_toolkit(name: str):
    """Import a toolkit (``fairseq``, ``onmt``) for use in this process with its noise
    kept off the terminal (module docstring); returns the module."""
    filter_warnings()
    quiet_loggers()
    with root_logging_kept():
        return importlib.import_module(name)
