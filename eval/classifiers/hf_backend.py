"""Hugging Face backend of the classifier protocol: a local sequence-classification model
(``AutoModelForSequenceClassification`` and its tokenizer, loaded with
``local_files_only``: nothing is downloaded), from a plain model folder or from an
evaluate-only run's folder whose ``compsuite_hf.json`` names it (``model``).

Inputs are strings, or (premise, hypothesis) pairs (a third item, the extra inputs
another backend's model may read, is ignored), encoded as the tokenizer encodes a
sentence pair (``tokenizer(text, text_pair)``) and batched with padding.  The classes
are the model's ``config.id2label`` in label order, or the ``labels`` of
``compsuite_hf.json`` (when the model's own names differ from the data's).
:meth:`HFClassifier.features` is the representation the classification head reads:
the last layer's hidden state of the first token (an encoder's ``[CLS]``), or of the
last token that is not padding for a decoder-only model (whose head reads that one).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from compsuite.data_prep.common.io import DataError


class HFClassifier:
    def __init__(self, checkpoint: str | Path, batch_size: int = 32):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from compsuite.eval.translators.base import count_batches
        from compsuite.eval.translators.hf_backend import (ensure_padding, from_folder,
                                                            model_folder, read_meta)
        from compsuite.toolkits.base import cuda_available

        checkpoint = Path(checkpoint)
        self.meta = read_meta(checkpoint)
        if self.meta.get("kind") != "classifier":
            raise DataError(f"{checkpoint}: a {self.meta.get('kind')} language model, not a "
                            "sequence classifier (its config names no "
                            "...ForSequenceClassification architecture); load it as a "
                            "translator")
        folder = model_folder(checkpoint, self.meta)
        self.device = "cuda" if cuda_available() else "cpu"
        self.tokenizer = from_folder(AutoTokenizer.from_pretrained, folder)
        ensure_padding(self.tokenizer)
        self.model = from_folder(AutoModelForSequenceClassification.from_pretrained,
                                 folder).to(self.device).eval()
        if self.model.config.pad_token_id is None:   # a decoder-only model finds its last token
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.classes = self._classes(checkpoint)
        self.batch_size = batch_size
        self.name = f"hf:{checkpoint}"
        self.calls = self.batches = 0
        #: None, or a callable told how many inputs each batch classified (a bar's update:
        #: :func:`compsuite.eval.translators.base.progress`)
        self.progress = None
        count_batches(self, self, "_forward", size=lambda chunk, hidden=False: len(chunk))

    def _classes(self, checkpoint: Path) -> list[str]:
        n = self.model.config.num_labels
        labels = self.meta.get("labels")
        if labels:
            if len(labels) != n:
                raise DataError(f"{checkpoint}: labels names {len(labels)} classes, but the "
                                f"model has {n}")
            return [str(x) for x in labels]
        id2label = self.model.config.id2label or {}
        return [str(id2label.get(i, id2label.get(str(i), i))) for i in range(n)]

    @property
    def pairs(self) -> bool:
        """Whether the model takes sentence pairs: any model may (its tokenizer joins them)."""
        return True

    def _encode(self, chunk: list) -> dict:
        first, second = [], []
        for x in chunk:
            if isinstance(x, str):
                first.append(x)
                second.append(None)
            elif isinstance(x, (tuple, list)) and len(x) in (2, 3) and all(
                    isinstance(s, str) for s in x[:2]):
                first.append(x[0])
                second.append(x[1])
            else:
                raise DataError(f"input {x!r} is not a string, a (premise, hypothesis) pair or "
                                "a (premise, hypothesis, inputs) triple")
        if any(s is None for s in second) and not all(s is None for s in second):
            raise DataError("a batch mixes single sentences and sentence pairs")
        enc = self.tokenizer(first, None if second[0] is None else second, padding=True,
                             truncation=True, return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def _forward(self, chunk: list, hidden: bool = False):
        """One batch: the logits, and with ``hidden`` the features (see the module
        docstring)."""
        import torch

        enc = self._encode(chunk)
        with torch.no_grad():
            out = self.model(**enc, output_hidden_states=hidden)
        if not hidden:
            return out.logits.float().cpu()
        last = out.hidden_states[-1]
        if hasattr(self.model, "score"):   # a decoder-only model's head reads the last token
            ends = enc["attention_mask"].sum(-1) - 1
            if self.tokenizer.padding_side == "left":
                ends = torch.full_like(ends, last.shape[1] - 1)
            feats = last[torch.arange(last.shape[0], device=last.device), ends]
        else:
            feats = last[:, 0]
        return feats.float().cpu()

    def _batches(self, inputs: Sequence, hidden: bool = False):
        inputs = list(inputs)
        for i in range(0, len(inputs), self.batch_size):
            yield self._forward(inputs[i:i + self.batch_size], hidden)

    def predict_proba(self, inputs: Sequence):
        """Class probabilities, [len(inputs), classes] in :attr:`classes` order."""
        import numpy as np
        import torch

        self.calls += 1
        rows = [b.softmax(-1) for b in self._batches(inputs)]
        return torch.cat(rows).numpy() if rows else np.zeros((0, len(self.classes)))

    def predict(self, inputs: Sequence) -> list[str]:
        proba = self.predict_proba(inputs)
        return [self.classes[i] for i in proba.argmax(-1).tolist()]

    def features(self, inputs: Sequence):
        import torch

        rows = list(self._batches(inputs, hidden=True))
        return torch.cat(rows) if rows else torch.zeros((0, self.model.config.hidden_size))
