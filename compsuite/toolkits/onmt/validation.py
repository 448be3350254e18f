"""The validation accuracies ``onmt_train`` logs (``train.log`` in the run folder), by
the step of the checkpoint each belongs to: what a study that selects a checkpoint by
OpenNMT-py's teacher-forced token accuracy on the development set reads
(:meth:`compsuite.toolkits.base.Backend.validation_scores`).

A validation belongs to the checkpoint saved at the same step: OpenNMT-py logs the
step's report, then "Validation accuracy: A", then "Saving checkpoint
<path>_step_N.pt", before any later step is reported.  A save without a validation
just before it (the final save of a run whose last step is not a multiple of
``valid_steps``) has no accuracy.  A resumed run appends to the same log; a step
validated twice keeps its last figure.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable

from compsuite.foundation.errors import ToolkitError

#: the log ``onmt_train`` writes in the run folder
LOG = "train.log"
VALIDATION = re.compile(r"Validation accuracy: (\S+)")
SAVED = re.compile(r"Saving checkpoint (\S+)_step_(\d+)\.pt")
#: a later step's report, or the command line the suite writes before each (re)start
NEXT_STEP = re.compile(r"\bStep \d+/|^# ")


def validation_accuracies(lines: Iterable[str]) -> dict[int, float]:
    """step -> validation accuracy (percent, as OpenNMT-py logs it) of each checkpoint
    saved right after a validation."""
    out: dict[int, float] = {}
    pending: float | None = None
    for line in lines:
        m = VALIDATION.search(line)
        if m:
            try:
                pending = float(m.group(1))
            except ValueError:
                pending = None
            continue
        m = SAVED.search(line)
        if m:
            if pending is not None and not math.isnan(pending):
                out[int(m.group(2))] = pending
            pending = None
            continue
        if NEXT_STEP.search(line):
            pending = None
    return out


def logged_accuracies(run_dir: Path) -> dict[int, float]:
    """:func:`validation_accuracies` of ``run_dir/train.log``; a missing log, or one
    without a validation followed by a checkpoint, is a ToolkitError."""
    log = Path(run_dir) / LOG
    if not log.is_file():
        raise ToolkitError(f"{log} is missing: the validation accuracies that select the "
                           "checkpoint are read from it")
    with open(log, encoding="utf-8", errors="replace") as fh:
        accs = validation_accuracies(fh)
    if not accs:
        raise ToolkitError(f"{log}: no validation followed by a checkpoint; the run needs "
                           "valid_steps equal to save_checkpoint_steps")
    return accs
