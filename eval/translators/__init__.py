"""One translator protocol for every model-in-the-loop test, with a backend per kind of
model (fairseq, OpenNMT-py, Hugging Face, CTranslate2 for Transformer checkpoints of
the first two; a checkpoint of any toolkit loads with
:func:`compsuite.toolkits.load_translator`) and a program's client (``command.py``).
Tests (localism unrolling, per-checkpoint overgeneralisation, ...) are written once
against :class:`Translator`, never per toolkit."""
from .base import HasEmbeddings, Translator  # noqa: F401
