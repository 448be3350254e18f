"""The classifier protocol.

A classifier loads a checkpoint once and maps a list of inputs to a list of class
names, batching internally; ``features`` gives the representation below the output
layer (one row per input), for analyses of what a model learnt.  ``calls`` counts the
``predict`` calls a test made.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable


@runtime_checkable
class Classifier(Protocol):
    name: str
    calls: int

    def predict(self, inputs: Sequence[str]) -> list[str]:
        """The predicted class of each input, in order."""
        ...

    def features(self, inputs: Sequence[str]):
        """The representation below the classifier, a tensor of shape [len(inputs), d]."""
        ...


def load_classifier(checkpoint: str | Path, data: str | Path | None = None,
                    batch_size: int = 512, toolkit: str | None = None) -> Classifier:
    """Load a checkpoint with the right backend.  ``data``: the fairseq-binarised
    folder (its dictionaries) for fairseq checkpoints."""
    from compsuite.eval.checkpoints import load_model

    return load_model(checkpoint, data, "classifier", toolkit, batch_size=batch_size)
