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
the same figure from the run's training log, through the backend
(:meth:`compsuite.toolkits.base.Backend.validation_scores`, OpenNMT-py's in
:mod:`compsuite.toolkits.onmt.validation`).
"""
from __future__ import annotations

from pathlib import Path

from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.errors import ConfigError


def best_onmt_checkpoint(backend, run_dir: Path, checkpoints: list,
                         rule: str = "best_valid_accuracy") -> dict:
    """The checkpoint with the best validation accuracy ``backend`` read from
    ``run_dir`` (:meth:`~compsuite.toolkits.base.Backend.validation_scores`) among
    ``checkpoints`` (:class:`compsuite.toolkits.Checkpoint`, as the backend lists
    them), or with ``rule``
    ``select_model_py`` the one validated just before it: ``checkpoint``, ``step``,
    ``valid_accuracy``, ``best_step`` and every validated step's accuracy
    (``by_step``)."""
    if rule not in ("best_valid_accuracy", "select_model_py"):
        raise ConfigError(f"onmt_checkpoint: unknown rule {rule!r}")
    accs = backend.validation_scores(run_dir)
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
            "criterion": backend.validation,
            "signature": signature(backend, rule).format()}


def signature(backend, rule: str) -> Signature:
    """The selection's: the validation score ``backend``'s training logged, as its log
    gives it (:attr:`~compsuite.toolkits.base.Backend.validation_metric`), and the rule
    that picks a checkpoint from it."""
    name, settings = backend.validation_metric
    return Signature(name, "1", {**settings, "rule": rule})
