"""fairseq backend of the classifier protocol: a checkpoint trained with
``--task sequence_classification`` (``--user-dir fairseq_plugins``), whose model maps
``src_tokens``/``src_lengths`` to class logits and offers ``features``."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from compsuite.data_prep.common.io import DataError


class FairseqClassifier:
    def __init__(self, checkpoint: str | Path, data: str | Path, batch_size: int = 512):
        import torch

        from compsuite.eval.checkpoints import load_fairseq

        models, _cfg, task = load_fairseq(checkpoint, data)
        self.model = models[0].eval()
        self.task = task
        self.batch_size = batch_size
        self.torch = torch
        self.name = f"fairseq:{checkpoint}"
        self.calls = 0

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

    def predict(self, inputs: Sequence[str]) -> list[str]:
        self.calls += 1
        names = self.task.class_names()
        out: list[str] = []
        with self.torch.no_grad():
            for tokens, lengths in self._batches(inputs):
                out += [names[i] for i in self.model(tokens, lengths).argmax(-1).tolist()]
        return out

    def features(self, inputs: Sequence[str]):
        with self.torch.no_grad():
            return self.torch.cat([self.model.features(t, n) for t, n in self._batches(inputs)])
