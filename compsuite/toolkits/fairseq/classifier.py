"""The fairseq classifier (the model protocol's classify and features): a checkpoint
trained with ``--task sequence_classification`` (``--user-dir fairseq_plugins``), whose
model maps ``src_tokens``/``src_lengths`` to class logits and offers ``features``; or
with ``--task sentence_pair_classification``, whose inputs are (premise, hypothesis)
pairs of tokenised strings (words outside the dictionary become ``<unk>``, counted in
``unknown_words``; single sequences with such words are an error), with a third item, a
dict of the raw ``--pair-inputs`` lines, for a model that reads parses, tags or
characters (:attr:`FairseqClassifier.pair_inputs`)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError
from compsuite.models.protocol import ModelBase, batch_done


class FairseqClassifier(ModelBase):
    capabilities = frozenset({"classify", "features"})

    #: inputs per batch where the decoding settings give none
    BATCH_SIZE = 512

    def __init__(self, checkpoint: str | Path, data: str | Path, batch_size: int = BATCH_SIZE):
        import torch

        from compsuite.toolkits.fairseq.checkpoints import load_fairseq

        models, _cfg, task = load_fairseq(checkpoint, data)
        self.model = models[0].eval()
        self.task = task
        self.batch_size = batch_size
        self.torch = torch
        self.name = f"fairseq:{checkpoint}"
        #: the inputs' words outside the dictionary, so far (a result may report it)
        self.unknown_words = 0

    @property
    def pairs(self) -> bool:
        """True for a sentence-pair task: an input is a (premise, hypothesis) pair."""
        return hasattr(self.task, "encode_pairs")

    @property
    def pair_inputs(self) -> tuple:
        """The per-word inputs the model reads beside the words (``--pair-inputs``:
        ``pos``, ``tree``, ``chars``); each pair then carries them as its third item, a
        dict of raw lines (``premise_tree``, ...)."""
        return tuple(getattr(self.task, "pair_inputs", ()) or ())

    @property
    def classes(self) -> list[str]:
        return list(self.task.class_names())

    def _pair_batches(self, inputs):
        d = self.task.source_dictionary
        for i in range(0, len(inputs), self.batch_size):
            chunk = [tuple(p) for p in inputs[i:i + self.batch_size]]
            for p in chunk:
                if len(p) not in (2, 3):
                    raise DataError(f"input {p!r} is not a (premise, hypothesis) pair or a "
                                    f"(premise, hypothesis, inputs) triple")
            net = self.task.encode_pairs(chunk)
            # words outside the dictionary are <unk> (test sets hold unseen words)
            self.unknown_words += int(net["premise_tokens"].eq(d.unk()).sum()
                                      + net["hypothesis_tokens"].eq(d.unk()).sum())
            yield net
            self._done(len(chunk))

    def predict_proba(self, inputs):
        """Class probabilities, [len(inputs), classes] in :attr:`classes` order."""
        import numpy as np

        if not self.pairs:
            raise DataError(f"{self.name}: predict_proba is for sentence-pair tasks")
        rows = []
        with self.torch.no_grad():
            for net in self._pair_batches(inputs):
                rows.append(self.model(**net).float().softmax(-1).numpy())
        return np.concatenate(rows) if rows else np.zeros((0, len(self.classes)))

    def _batches(self, inputs: Sequence[str]):
        d = self.task.source_dictionary
        for i in range(0, len(inputs), self.batch_size):
            chunk = inputs[i:i + self.batch_size]
            toks = [d.encode_line(s, add_if_not_exist=False, append_eos=True).long()
                    for s in chunk]
            for s, t in zip(chunk, toks):
                if (t == d.unk()).any():
                    raise DataError(f"input {s!r} has a token the model's dictionary lacks")
            width = max(len(t) for t in toks)
            batch = self.torch.full((len(toks), width), d.pad(), dtype=self.torch.long)
            for j, t in enumerate(toks):
                batch[j, :len(t)] = t
            yield batch, self.torch.tensor([len(t) for t in toks])
            self._done(len(chunk))

    def _done(self, n: int) -> None:
        batch_done(n)

    def classify(self, inputs: Sequence) -> list[str]:
        names = self.task.class_names()
        if self.pairs:
            proba = self.predict_proba(inputs)
            return [names[i] for i in proba.argmax(-1).tolist()]
        out: list[str] = []
        with self.torch.no_grad():
            for tokens, lengths in self._batches(inputs):
                out += [names[i] for i in self.model(tokens, lengths).argmax(-1).tolist()]
        return out

    def features(self, inputs: Sequence):
        with self.torch.no_grad():
            if self.pairs:
                return self.torch.cat([self.model.features(**net)
                                       for net in self._pair_batches(inputs)])
            return self.torch.cat([self.model.features(t, n) for t, n in self._batches(inputs)])
