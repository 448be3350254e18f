"""The translator protocol.

A translator loads a checkpoint once and maps a list of sources to a list of
outputs, batching internally with the toolkit's own inference code.  It counts its
work: ``calls`` (``translate`` calls made by the test) and ``batches`` (forward
passes of the toolkit), so tests and benchmarks can show how they batch.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class Translator(Protocol):
    name: str
    calls: int
    batches: int

    def translate(self, sources: list[str]) -> list[str]:
        """Outputs for ``sources``, one per source, in order."""
        ...


@runtime_checkable
class HasEmbeddings(Protocol):
    """What a test needing representations asks of a translator besides translating
    (both backends provide it)."""

    def embeddings(self, tokens: list[str]) -> dict[str, list[float]]:
        """Source-side input embeddings of the given tokens (those in the vocabulary)."""
        ...


def count_batches(translator, owner, method: str) -> None:
    """Wrap ``owner.method`` (the toolkit's one-batch forward call) so that every call
    adds one to ``translator.batches``."""
    inner = getattr(owner, method)

    def counted(*args, **kwargs):
        translator.batches += 1
        return inner(*args, **kwargs)

    setattr(owner, method, counted)


def load_translator(checkpoint: str | Path, data: str | Path | None = None,
                    batch_size: int = 256, max_length: int = 512,
                    toolkit: str | None = None, beam: int = 1) -> Translator:
    """Load a checkpoint with the right backend.  ``data``: the fairseq-binarised
    folder (its dictionaries) for fairseq checkpoints; unused for OpenNMT-py, whose
    checkpoints carry their vocabularies.  ``beam``: 1 (greedy, the default) or the beam
    size (the paradox study translates with beam 5, as its authors did)."""
    from compsuite.eval.checkpoints import load_model

    return load_model(checkpoint, data, "translator", toolkit, batch_size=batch_size,
                      max_length=max_length, beam=beam)
