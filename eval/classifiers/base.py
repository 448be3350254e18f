"""The classifier protocol.

A classifier loads a checkpoint once and maps a list of inputs to a list of class
names, batching internally; ``features`` gives the representation below the output
layer (one row per input), for analyses of what a model learnt.  ``calls`` counts the
``predict`` calls a test made.
"""
from __future__ import annotations

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
