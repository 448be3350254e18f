"""One classifier protocol for every test that classifies (CTL++'s symbols, NLI
labels), beside the translator protocol; fairseq and Hugging Face models as classifiers
(a checkpoint of any toolkit loads with :func:`compsuite.toolkits.load_classifier`), and
a program's answers (``eval/translators/command.py``)."""
from .base import Classifier  # noqa: F401
