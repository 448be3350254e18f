"""The Hugging Face classifier (the model protocol's classify and features): a local
sequence-classification model (``AutoModelForSequenceClassification`` and its tokenizer,
loaded with ``local_files_only``: nothing is downloaded), from a plain model folder or
from an evaluate-only run's folder whose ``compsuite_hf.json`` names it (``model``).

Inputs are strings, or (premise, hypothesis) pairs (a third item, the extra inputs
another backend's model may read, is ignored), encoded as the tokenizer encodes a
sentence pair (``tokenizer(text, text_pair)``) and batched with padding, in batches
sorted by length (``batch_size: auto`` sizes them to the device:
:mod:`compsuite.toolkits.hf.batching`), the rows back in the inputs' order; an input longer
than the model's positions (:func:`~compsuite.toolkits.hf.translator.position_limit`)
is an error naming it, before any batch is classified (nothing is cut).  The classes
are the model's ``config.id2label`` in label order, or the ``labels`` of
``compsuite_hf.json`` (when the model's own names differ from the data's).
:meth:`HFClassifier.features` is the representation the classification head reads:
the last layer's hidden state of the first token (an encoder's ``[CLS]``), or of the
last token that is not padding for a decoder-only model (whose head reads that one).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError
from compsuite.models.protocol import ModelBase


class HFClassifier(ModelBase):
    capabilities = frozenset({"classify", "features"})

    #: inputs per batch where the decoding settings give none (and on the CPU with
    #: ``batch_size: auto``)
    BATCH_SIZE = 32

    def __init__(self, checkpoint: str | Path, batch_size: int | str = BATCH_SIZE):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from compsuite.devices import cuda_available
        from compsuite.models.protocol import count_batches
        from compsuite.toolkits.hf.batching import Batcher
        from compsuite.toolkits.hf.translator import (ensure_padding, from_folder,
                                                      model_folder, position_limit, read_meta)

        checkpoint = Path(checkpoint)
        self.meta = read_meta(checkpoint)
        if self.meta.get("kind") != "classifier":   # named by the user's folder
            raise DataError(f"{self.meta.get('model') or checkpoint}: a "
                            f"{self.meta.get('kind')} language model, not a "
                            "sequence classifier (its config names no "
                            "...ForSequenceClassification architecture); load it as a "
                            "translator")
        folder = model_folder(checkpoint, self.meta)
        #: the model's folder (the user's, for an evaluate-only run): errors name it
        self.folder = folder
        self.device = "cuda" if cuda_available() else "cpu"
        self.tokenizer = from_folder(AutoTokenizer.from_pretrained, folder)
        ensure_padding(self.tokenizer)
        self.model = from_folder(AutoModelForSequenceClassification.from_pretrained,
                                 folder).to(self.device).eval()
        if self.model.config.pad_token_id is None:   # a decoder-only model finds its last token
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.classes = self._classes(checkpoint)
        self.limit = position_limit(self.model.config, self.tokenizer)
        self.name = f"hf:{checkpoint}"
        self.batcher = Batcher(batch_size, self.BATCH_SIZE, self.device, self.name)
        count_batches(self, "_forward", size=lambda chunk, hidden=False: len(chunk))

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

    @staticmethod
    def _split(chunk: list) -> tuple[list[str], list[str] | None]:
        """The first sentences and the second ones (None: single sentences)."""
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
        return first, None if not second or second[0] is None else second

    def _encode(self, chunk: list) -> dict:
        first, second = self._split(chunk)
        enc = self.tokenizer(first, second, padding=True, return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def check_lengths(self, inputs: list) -> list[int]:
        """Every input's length in tokens, each checked against the model's positions (an
        error naming the first that does not fit)."""
        from compsuite.toolkits.hf.translator import shortened, too_long

        if not inputs:
            return []
        first, second = self._split(inputs)
        lengths = []
        for k, ids in enumerate(self.tokenizer(first, second)["input_ids"]):
            lengths.append(len(ids))
            if self.limit is not None and len(ids) > self.limit[0]:
                text = first[k] if second is None else \
                    f"{shortened(first[k], 40)} | {shortened(second[k], 40)}"
                raise too_long(f"hf:{self.folder}", k, len(inputs), text, len(ids), self.limit,
                               "as its tokenizer encodes it")
        return lengths

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

    def _rows(self, inputs: Sequence, hidden: bool = False) -> list:
        """One row per input (logits, or with ``hidden`` features), in the inputs' order,
        from batches sorted by length (:mod:`~compsuite.toolkits.hf.batching`)."""
        inputs = list(inputs)
        lengths = self.check_lengths(inputs)   # before any batch is classified
        return self.batcher.map(inputs, lengths, lambda chunk: list(self._forward(chunk, hidden)))

    @property
    def batch_size(self) -> int:
        """The batch size in use (``auto``: the one found so far)."""
        return self.batcher.size

    def predict_proba(self, inputs: Sequence):
        """Class probabilities, [len(inputs), classes] in :attr:`classes` order."""
        import numpy as np
        import torch

        rows = self._rows(inputs)
        return torch.stack(rows).softmax(-1).numpy() if rows else np.zeros((0, len(self.classes)))

    def classify(self, inputs: Sequence) -> list[str]:
        proba = self.predict_proba(inputs)
        return [self.classes[i] for i in proba.argmax(-1).tolist()]

    def features(self, inputs: Sequence):
        import torch

        rows = self._rows(inputs, hidden=True)
        return torch.stack(rows) if rows else torch.zeros((0, self.model.config.hidden_size))
