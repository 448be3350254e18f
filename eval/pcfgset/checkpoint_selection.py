"""Which OpenNMT-py checkpoint of a PCFG SET run is scored (a profile's
``onmt_checkpoint``: ``select_model_py`` in the paper profile, or
``best_valid_accuracy``).

``select_model.py`` takes ``np.argmax(val_accs) * steps`` (line 43): the first
validation is at step ``steps``, not 0, so the checkpoint it keeps is the one saved one
validation *before* the best.  That is how the authors' scored models were chosen, so
the paper profile follows it (``select_model_py``); when the best is the first
validation the script would look for a step-0 model that does not exist, and the first
checkpoint is taken.  ``best_valid_accuracy`` takes the best itself, as the script's
comment and section 6.3.1 describe it.

The authors trained with a validation and a checkpoint at the end of every epoch and
kept the checkpoint of the highest "Validation accuracy" in the training log
(am-i-compositional ``src/train/OpenNMT/select_model.py``: OpenNMT-py's teacher-forced
token accuracy on the development set; the first of equal maxima).  This module reads
the same figure from the log ``onmt_train`` wrote (``train.log`` in the run folder).

A validation belongs to the checkpoint saved at the same step: OpenNMT-py logs the
step's report, then "Validation accuracy: A", then "Saving checkpoint
<path>_step_N.pt", before any later step is reported.  A save without a validation
just before it (the final save of a run whose last step is not a multiple of
``valid_steps``) has no accuracy and is not a candidate.  A resumed run appends to the
same log; a step validated twice keeps its last figure.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable

from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.errors import ConfigError, ToolkitError

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


def best_onmt_checkpoint(run_dir: Path, checkpoints: list, rule: str = "best_valid_accuracy"
                         ) -> dict:
    """The checkpoint with the best validation accuracy in ``run_dir/train.log`` among
    ``checkpoints`` (:class:`compsuite.toolkits.Checkpoint`, as the backend lists
    them), or with ``rule``
    ``select_model_py`` the one validated just before it: ``checkpoint``, ``step``,
    ``valid_accuracy``, ``best_step`` and every validated step's accuracy
    (``by_step``)."""
    if rule not in ("best_valid_accuracy", "select_model_py"):
        raise ConfigError(f"onmt_checkpoint: unknown rule {rule!r}")
    log = Path(run_dir) / "train.log"
    if not log.is_file():
        raise ToolkitError(f"{log} is missing: the validation accuracies that select the "
                           "checkpoint are read from it")
    with open(log, encoding="utf-8", errors="replace") as fh:
        accs = validation_accuracies(fh)
    if not accs:
        raise ToolkitError(f"{log}: no validation followed by a checkpoint; the run needs "
                           "valid_steps equal to save_checkpoint_steps")
    on_disk = {c.at: c.path for c in checkpoints}
    # the first of equal maxima, in step order (as numpy.argmax in select_model.py)
    best_step = max(sorted(accs), key=lambda step: accs[step])
    best = best_step
    if rule == "select_model_py":
        steps = sorted(accs)
        best = steps[max(steps.index(best_step) - 1, 0)]
    if best not in on_disk:
        raise ConfigError(f"{run_dir}: the checkpoint of step {best} (best validation "
                          f"accuracy {accs[best]}) was not kept; train with "
                          "keep_checkpoint: -1 to select it")
    return {"checkpoint": str(on_disk[best]), "step": best, "valid_accuracy": accs[best],
            "best_step": best_step, "rule": rule,
            "by_step": {str(step): accs[step] for step in sorted(accs)},
            "criterion": "onmt validation accuracy (teacher-forced tokens)",
            "signature": signature(rule).format()}


def signature(rule: str) -> Signature:
    """The selection's: OpenNMT-py's validation accuracy as its log gives it, and the
    rule that picks a checkpoint from it."""
    return Signature("onmt_valid_accuracy", "1", {"tokens": "teacher-forced",
                                                  "scale": "percent", "read": "train.log",
                                                  "rule": rule})
