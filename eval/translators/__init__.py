"""One translator protocol for every model-in-the-loop test, with a fairseq and an
OpenNMT-py backend.  Tests (localism unrolling, per-checkpoint overgeneralisation,
...) are written once against :class:`Translator`, never per toolkit."""
from .base import HasEmbeddings, Translator, load_translator  # noqa: F401
