"""``--task sentence_pair_classification``: classify a (premise, hypothesis) pair into one
of a set of classes (NLI: entailment, neutral, contradiction), the two sentences kept
apart.  fairseq's own ``sentence_prediction`` concatenates them for a RoBERTa-style
head; the NLI models (``fairseq_plugins/models/nli.py``) read each sentence on its own.

Data: a fairseq-binarised folder written by two ``fairseq-preprocess`` calls over a raw
folder holding ``{split}.premise``, ``{split}.hypothesis`` (tokenised, one sentence a
line) and ``{split}.label`` (one class name a line), line-aligned::

    fairseq-preprocess --source-lang premise --target-lang hypothesis --joined-dictionary \\
        --trainpref RAW/train --validpref RAW/valid --testpref RAW/test --destdir BIN
    fairseq-preprocess --only-source --source-lang label --padding-factor 1 \\
        --trainpref RAW/train --validpref RAW/valid --testpref RAW/test --destdir BIN

The first writes ``{split}.premise-hypothesis.{premise,hypothesis}.{bin,idx}`` and one
word dictionary (``dict.premise.txt``, with ``dict.hypothesis.txt`` its copy); the
second ``{split}.label-None.label.{bin,idx}`` and the classes, ``dict.label.txt``.
Every subset fairseq-preprocess wrote can be evaluated (``--valid-subset
valid,test,test1``).  Each sentence's ``</s>`` is dropped: the models see the words
only.

Batches: ``net_input = {premise_tokens, premise_lengths, hypothesis_tokens,
hypothesis_lengths}``, padded on the right; ``target`` the class index.  The criterion
is ``--criterion sequence_classification``; evaluation sets keep every example
(``fairseq_plugins/evaluation_batches.py``).

``--shuffle-words`` (Nie, Wang and Bansal 2019, Table 3's "WS"): the words of each
training sentence are permuted afresh every epoch, by a generator seeded with (seed,
epoch, example id, side); padding stays where it is and evaluation batches are never
shuffled.  It is applied in :meth:`train_step`, in the training process, so
``--num-workers`` and fairseq's persistent data-loader workers (which never see a
dataset's ``set_epoch``) do not freeze it at the first epoch's permutation.

``--embedding-path``: pretrained word vectors from a GloVe-format text file (``word v1
... vd`` a line; a word2vec ``N D`` header line is skipped), ``d`` equal to the model's
``--embed-dim``.  A dictionary word missing from the file (exact match first, then its
lower-cased form) keeps its random initialisation; how many were found is logged.  The
vectors are read only when a model is built for training: a model reloaded from a
checkpoint (``checkpoint_utils.load_model_ensemble_and_task``) takes its weights from
the checkpoint and does not need the file.
"""

import logging
import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import torch
from fairseq.data import (Dictionary, FairseqDataset, IdDataset, NestedDictionaryDataset,
                          NumelDataset, NumSamplesDataset, RawLabelDataset, RightPadDataset,
                          SortDataset, StripTokenDataset, data_utils)
from fairseq.dataclass import FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II, MISSING

from ..evaluation_batches import KeepEvaluationExamples
from ..labels import FILLER, class_names

logger = logging.getLogger(__name__)

PREMISE, HYPOTHESIS = 0, 1   # the ``side`` in the shuffle's seed


@dataclass
class SentencePairClassificationConfig(FairseqDataclass):
    data: str = field(default=MISSING, metadata={"help": "the fairseq-binarised folder"})
    max_positions: int = field(default=512, metadata={"help": "longest sentence, in tokens"})
    shuffle_words: bool = field(
        default=False,
        metadata={"help": "permute the words of each training sentence, afresh every epoch"})
    embedding_path: Optional[str] = field(
        default=None,
        metadata={"help": "pretrained word vectors, a GloVe-format text file (dimension = "
                          "the model's --embed-dim); without it embeddings are learned"})
    augment_subsets: str = field(
        default="",
        metadata={"help": "comma-separated binarised subsets whose pairs form an "
                          "augmentation pool: each training epoch adds a fresh sample"})
    augment_per_epoch: int = field(
        default=20000, metadata={"help": "pairs of the pool added to each epoch (all of "
                                         "them when the pool is smaller)"})
    seed: int = II("common.seed")


# ----------------------------------------------------------------------------- helpers
def shuffle_words(tokens: torch.Tensor, pad: int, ids: Sequence[int], seed: int, epoch: int,
                  side: int) -> torch.Tensor:
    """Each row's real (non-pad) tokens permuted, the padding on the right untouched.
    Row r's permutation comes from a generator seeded with (seed, epoch, ids[r], side):
    the same for a given seed, epoch and example, different between epochs."""
    mask = tokens.ne(pad)
    lengths = mask.sum(1).tolist()
    B, T = tokens.shape
    index = np.tile(np.arange(T), (B, 1))
    for r, (n, i) in enumerate(zip(lengths, ids)):
        if n and not bool(mask[r, :n].all()):
            raise ValueError("shuffle_words expects right-padded rows")
        rng = np.random.default_rng([int(seed), int(epoch), int(i), int(side)])
        index[r, :n] = rng.permutation(n)
    return tokens.gather(1, torch.from_numpy(index).to(tokens.device))


def load_word_vectors(path: str, dictionary: Dictionary, weight: torch.Tensor) -> dict:
    """Copy the vectors of ``dictionary``'s words found in the GloVe-format file
    ``path`` into the rows of ``weight`` ([len(dictionary), d]).  Special symbols and
    fairseq's filler symbols are never looked up.  Returns counts: ``found`` (of
    ``types``), of which ``lowercase`` matched by their lower-cased form only."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--embedding-path {path}: no such file")
    dim = weight.size(1)
    wanted = {}
    for i in range(dictionary.nspecial, len(dictionary)):
        word = dictionary[i]
        if not FILLER.fullmatch(word):
            wanted[word] = i
    by_lower: dict = {}
    for word, i in wanted.items():
        by_lower.setdefault(word.lower(), []).append(i)
    exact, lower = {}, {}
    first = True   # the first line with vectors: its width must be the model's
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            head = line.split(" ", 1)[0].rstrip()
            if first:
                parts = line.rstrip().split(" ")
                if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue   # a word2vec header: "<count> <dimension>"
                if len(parts) != dim + 1:
                    raise ValueError(f"{path}: line {lineno} has {len(parts) - 1} values; the "
                                     f"model's embeddings have {dim} (--embed-dim)")
                first = False
            # dictionary words hold no space, so only a line starting with one can match
            if head not in wanted and head not in by_lower:
                continue
            parts = line.rstrip().split(" ")
            if len(parts) < dim + 1:
                raise ValueError(f"{path}: line {lineno} has {len(parts) - 1} values; the "
                                 f"model's embeddings have {dim} (--embed-dim)")
            if " ".join(parts[:-dim]) != head:
                continue       # a multi-word entry (GloVe 840B has some, e.g. ". . .")
            try:
                vec = torch.tensor([float(v) for v in parts[-dim:]])
            except ValueError:
                raise ValueError(f"{path}: line {lineno}: not {dim} numbers after the "
                                 f"word") from None
            if head in wanted:
                exact[wanted[head]] = vec
            for i in by_lower.get(head, ()):
                lower.setdefault(i, vec)
    with torch.no_grad():
        for i, vec in exact.items():
            weight[i] = vec.to(weight.dtype)
        n_lower = 0
        for i, vec in lower.items():
            if i not in exact:
                weight[i] = vec.to(weight.dtype)
                n_lower += 1
    return {"found": len(exact) + n_lower, "lowercase": n_lower, "types": len(wanted),
            "dim": dim}


class _SumDataset(FairseqDataset):
    """A number per example; a batch holds their sum (``ntokens`` of both sentences)."""

    def __init__(self, values):
        self.values = values

    def __getitem__(self, index):
        return int(self.values[index])

    def __len__(self):
        return len(self.values)

    def collater(self, samples):
        return sum(samples)


class _Subset(FairseqDataset):
    """The items of ``base`` at ``indices``, in that order."""

    def __init__(self, base, indices):
        self.base, self.indices = base, np.asarray(indices, dtype=np.int64)
        self.sizes = base.sizes[self.indices]

    def __getitem__(self, index):
        return self.base[int(self.indices[index])]

    def __len__(self):
        return len(self.indices)

    def num_tokens(self, index):
        return int(self.sizes[index])

    def size(self, index):
        return int(self.sizes[index])


# ----------------------------------------------------------------------------- the task
@register_task("sentence_pair_classification", dataclass=SentencePairClassificationConfig)
class SentencePairClassificationTask(KeepEvaluationExamples, FairseqTask):
    cfg: SentencePairClassificationConfig

    def __init__(self, cfg, word_dictionary, label_dictionary):
        super().__init__(cfg)
        self.word_dict = word_dictionary
        self.label_dict = label_dictionary
        self.epoch = 1
        self.embedding_stats = None

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        path = os.path.join(cfg.data, "dict.premise.txt")
        if not os.path.isfile(path):
            path = os.path.join(cfg.data, "dict.txt")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{cfg.data}: no dict.premise.txt (or dict.txt); see "
                                    f"fairseq_plugins/doc.md for the fairseq-preprocess calls")
        words = Dictionary.load(path)
        hyp = os.path.join(cfg.data, "dict.hypothesis.txt")
        if os.path.isfile(hyp) and Dictionary.load(hyp) != words:
            raise ValueError(f"{cfg.data}: dict.premise.txt and dict.hypothesis.txt differ; "
                             f"binarise with --joined-dictionary (one word dictionary)")
        labels = Dictionary.load(os.path.join(cfg.data, "dict.label.txt"))
        task = cls(cfg, words, labels)
        logger.info(f"[words] dictionary: {len(words)} types; {task.num_classes} classes: "
                    f"{' '.join(task.class_names())}")
        return task

    # ------------------------------------------------------------------ classes
    @staticmethod
    def classes_of(labels: Dictionary) -> list:
        """The class names: the label dictionary's symbols after fairseq's special ones,
        without the filler symbols of a --padding-factor above 1."""
        return class_names(labels)

    def class_names(self) -> list:
        return self.classes_of(self.label_dict)

    @property
    def num_classes(self) -> int:
        return len(self.class_names())

    # ------------------------------------------------------------------ data
    def _load(self, prefix: str, dictionary: Dictionary, combine: bool, split: str):
        ds = data_utils.load_indexed_dataset(prefix, dictionary, combine=combine)
        if ds is None:
            raise FileNotFoundError(f"split '{split}' not found: {prefix}.{{bin,idx}}")
        return ds

    def _streams(self, split: str, combine: bool = False):
        """(premises, hypotheses, class indices, premise sizes, hypothesis sizes) of a
        binarised subset, the sentences without their ``</s>``."""
        pair = os.path.join(self.cfg.data, f"{split}.premise-hypothesis.")
        premise = self._load(pair + "premise", self.word_dict, combine, split)
        hypothesis = self._load(pair + "hypothesis", self.word_dict, combine, split)
        label_prefix = os.path.join(self.cfg.data, f"{split}.label-None.label")
        if not os.path.exists(label_prefix + ".idx"):
            label_prefix = os.path.join(self.cfg.data, f"{split}.label")
        tgt = self._load(label_prefix, self.label_dict, combine, split)
        if not len(premise) == len(hypothesis) == len(tgt):
            raise ValueError(f"{split}: {len(premise)} premises, {len(hypothesis)} hypotheses "
                             f"and {len(tgt)} labels")
        sizes = {}
        for name, ds in (("premise", premise), ("hypothesis", hypothesis)):
            empty = np.flatnonzero(ds.sizes <= 1)   # only </s>
            if len(empty):
                raise ValueError(f"{split}.{name}: line {empty[0] + 1} is an empty sentence")
            sizes[name] = ds.sizes - 1              # without </s>
        eos, names = self.label_dict.eos(), self.class_names()
        labels = []
        for i in range(len(tgt)):
            t = tgt[i]
            if len(t) != 2 or int(t[1]) != eos or self.label_dict[int(t[0])] not in names:
                raise ValueError(f"{label_prefix}: line {i + 1} is not exactly one known class")
            labels.append(int(t[0]) - self.label_dict.nspecial)
        return (StripTokenDataset(premise, self.word_dict.eos()),
                StripTokenDataset(hypothesis, self.word_dict.eos()),
                labels, sizes["premise"], sizes["hypothesis"])

    def augmentation_sample(self, pool_size: int, epoch: int) -> np.ndarray:
        """The pool indices added to ``epoch``: ``augment_per_epoch`` of them (or the
        whole pool), drawn by a generator seeded with (seed, epoch)."""
        rng = np.random.default_rng([int(self.cfg.seed), int(epoch)])
        order = rng.permutation(pool_size)
        return np.sort(order[:min(int(getattr(self.cfg, "augment_per_epoch", 20000)), pool_size)])

    def has_sharded_data(self, split):
        # with augmentation, fairseq reloads the train subset every epoch (a new sample)
        if getattr(self.cfg, "augment_subsets", "") and split == getattr(self.cfg, "train_subset", "train"):
            return True
        return super().has_sharded_data(split)

    def load_dataset(self, split, combine=False, epoch=1, **kwargs):
        premise, hypothesis, labels, p_sizes, h_sizes = self._streams(split, combine)
        is_train = split == getattr(self.cfg, "train_subset", "train")
        added = 0
        if is_train and getattr(self.cfg, "augment_subsets", ""):
            from fairseq.data import ConcatDataset

            prem, hyp, labs, ps, hs = [premise], [hypothesis], list(labels), [p_sizes], [h_sizes]
            pools = [x.strip() for x in self.cfg.augment_subsets.split(",") if x.strip()]
            streams = [self._streams(name) for name in pools]
            total = sum(len(st[2]) for st in streams)
            chosen = self.augmentation_sample(total, epoch)
            offset = 0
            for st in streams:
                n = len(st[2])
                idx = chosen[(chosen >= offset) & (chosen < offset + n)] - offset
                if len(idx):
                    prem.append(_Subset(st[0], idx))
                    hyp.append(_Subset(st[1], idx))
                    labs += [st[2][i] for i in idx]
                    ps.append(st[3][idx])
                    hs.append(st[4][idx])
                offset += n
            added = len(chosen)
            premise, hypothesis, labels = ConcatDataset(prem), ConcatDataset(hyp), labs
            p_sizes, h_sizes = np.concatenate(ps), np.concatenate(hs)
            logger.info(f"epoch {epoch}: {added} of {total} pairs of {','.join(pools)} added "
                        f"to {split}")
        pad = self.word_dict.pad()
        dataset = NestedDictionaryDataset(
            {"id": IdDataset(),
             "net_input": {"premise_tokens": RightPadDataset(premise, pad_idx=pad),
                           "premise_lengths": NumelDataset(premise, reduce=False),
                           "hypothesis_tokens": RightPadDataset(hypothesis, pad_idx=pad),
                           "hypothesis_lengths": NumelDataset(hypothesis, reduce=False)},
             "target": RawLabelDataset(labels),
             "nsentences": NumSamplesDataset(),
             "ntokens": _SumDataset(p_sizes + h_sizes)},
            sizes=[np.maximum(p_sizes, h_sizes)])
        if is_train:
            with data_utils.numpy_seed(self.cfg.seed, epoch if added else 1):
                dataset = SortDataset(dataset, sort_order=[np.random.permutation(len(dataset))])
        self.datasets[split] = dataset
        logger.info(f"{split}: {len(dataset)} pairs")
        return dataset

    def encode_pairs(self, pairs: Sequence) -> dict:
        """``net_input`` for (premise, hypothesis) strings, tokenised like the data
        (words split on white space; a word not in the dictionary is ``<unk>``)."""
        d, out = self.word_dict, {}
        for side, name in ((0, "premise"), (1, "hypothesis")):
            toks = [d.encode_line(p[side], add_if_not_exist=False, append_eos=False).long()
                    for p in pairs]
            if any(len(t) == 0 for t in toks):
                raise ValueError(f"an empty {name}")
            out[f"{name}_tokens"] = data_utils.collate_tokens(toks, d.pad())
            out[f"{name}_lengths"] = torch.tensor([len(t) for t in toks])
        return out

    @torch.no_grad()
    def predict(self, models, net_input: dict) -> list:
        """The class names predicted for a batch by a model or an ensemble (mean of
        the models' probabilities)."""
        models = models if isinstance(models, (list, tuple)) else [models]
        probs = None
        for m in models:
            m.eval()
            p = m(**net_input).float().softmax(-1)
            probs = p if probs is None else probs + p
        names = self.class_names()
        return [names[i] for i in probs.argmax(-1).tolist()]

    # ------------------------------------------------------------------ model
    def build_model(self, cfg, from_checkpoint=False):
        model = super().build_model(cfg, from_checkpoint)
        if self.cfg.embedding_path and not from_checkpoint:
            embed = getattr(model, "embed", None)
            if not isinstance(embed, torch.nn.Embedding):
                raise TypeError(f"--embedding-path: {type(model).__name__} has no word "
                                f"embedding `embed`")
            stats = load_word_vectors(self.cfg.embedding_path, self.word_dict, embed.weight)
            self.embedding_stats = stats
            logger.info(f"pretrained word vectors: {stats['found']} of {stats['types']} "
                        f"dictionary types found in {self.cfg.embedding_path} "
                        f"({stats['lowercase']} by their lower-cased form); the other "
                        f"{stats['types'] - stats['found']} keep their random initialisation")
        return model

    # ------------------------------------------------------------------ training
    def begin_epoch(self, epoch, model):
        super().begin_epoch(epoch, model)
        self.epoch = epoch

    def shuffled(self, sample: dict, epoch: int) -> dict:
        """The batch with the words of each sentence permuted (see :func:`shuffle_words`)."""
        ids = sample["id"].tolist()
        net = dict(sample["net_input"])
        pad = self.word_dict.pad()
        for side, name in ((PREMISE, "premise_tokens"), (HYPOTHESIS, "hypothesis_tokens")):
            net[name] = shuffle_words(net[name], pad, ids, self.cfg.seed, epoch, side)
        return {**sample, "net_input": net}

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        if self.cfg.shuffle_words and sample:
            sample = self.shuffled(sample, self.epoch)
        return super().train_step(sample, model, criterion, optimizer, update_num, ignore_grad)

    def max_positions(self):
        return self.cfg.max_positions

    @property
    def source_dictionary(self):
        return self.word_dict

    @property
    def target_dictionary(self):
        return self.label_dict
