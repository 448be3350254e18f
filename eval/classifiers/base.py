"""The classifier protocol.

A classifier loads a checkpoint once and maps a list of inputs to a list of class
names, batching internally; ``features`` gives the representation below the output
layer (one row per input), for analyses of what a model learnt.  ``calls`` counts the
``predict`` calls a test made.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

from compsuite.errors import ConfigError


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
    from compsuite.eval.checkpoints import checkpoint_toolkit, existing

    checkpoint = existing(checkpoint)
    toolkit = toolkit or checkpoint_toolkit(checkpoint)
    if toolkit == "fairseq":
        if data is None:
            raise ConfigError("a fairseq checkpoint needs --data (the fairseq-bin folder with "
                              "its dictionaries)")
        from .fairseq_backend import FairseqClassifier

        return FairseqClassifier(checkpoint, Path(data), batch_size)
    raise ConfigError(f"no classifier backend for toolkit {toolkit!r}")
