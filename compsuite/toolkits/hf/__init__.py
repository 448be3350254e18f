"""Hugging Face: its backend (a local model folder, fine-tuned with LoRA or fully),
the training program it runs in a child process (train.py), and the model as a
translator or a classifier in the loop (translator.py, classifier.py), or prompted as a
served model is (prompted.py; docs/prompting.md)."""
from .backend import BACKEND  # noqa: F401
