"""OpenNMT-py: its backend (onmt_train, predictions by onmt_translate or CTranslate2),
its data writer (data.py, onmt_build_vocab) and its translator in the loop
(translator.py, with CTranslate2's view of its checkpoints)."""
from .backend import BACKEND  # noqa: F401
