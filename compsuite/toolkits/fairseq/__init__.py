"""fairseq: its backend (training with fairseq-train and the suite's --user-dir
plugins, predictions by fairseq-generate or CTranslate2), its data writer (data.py,
fairseq-preprocess), its models in the loop (translator.py, classifier.py), loading a
checkpoint with its dictionaries (checkpoints.py) and reading fairseq-generate's output
(predictions.py)."""
from .backend import BACKEND  # noqa: F401
