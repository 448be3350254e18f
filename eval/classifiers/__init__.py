"""One classifier protocol for every test that classifies (CTL++'s symbols, NLI
labels), beside the translator protocol; fairseq backend now."""
from .base import Classifier, load_classifier  # noqa: F401
