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

``--pair-inputs pos,tree,chars`` (any of them; none by default): per-word inputs of the
tree and feature-based models (S-TLSTM, G-TLSTM, DIIN), binarised beside the words from
``{split}.premise_F`` / ``{split}.hypothesis_F`` (``compsuite/toolkits/fairseq/data.py``'s
``write_fairseq_pairs``; ``dict.premise_F.txt``).  They are checked when a split is
loaded: a ``pos`` line has one tag per word, a ``tree`` line is shift (``S``) and
reduce (``R``) transitions building one binary tree over the words, a ``chars`` line
has as many words (characters separated by spaces, words by ``<w>``), none empty; an
error names the split, the side and the line otherwise.  ``net_input`` gains, per side
(``premise_*``, ``hypothesis_*``):

* ``premise_pos``: [B, T] tag ids, right-padded with the tag dictionary's pad (T: the
  batch's longest sentence, as ``premise_tokens``);
* ``premise_tree``: [B, max(T-1, 1), 2], the children of each internal node in
  post-order (the k-th reduce).  Within a sentence of n words, nodes 0..n-1 are the
  words and n+k the k-th internal node, so row n-2 is the root; rows from n-1 on are
  -1 (a one-word sentence has no row with values: its root is word 0).  Computed with
  numpy in the dataset (the data-loader workers), not in the model;
* ``premise_chars``: [B, T, C] character ids, right-padded with the character
  dictionary's pad on both axes (C: the batch's longest word; no cap).

``task.feature_dictionary("pos")`` / ``("chars")`` give their dictionaries (None when
not loaded), for a model's embeddings; a model declaring ``PAIR_INPUTS`` that were not
loaded is refused when it is built (a ValueError naming ``--pair-inputs``).  With
``--shuffle-words`` the tags and characters move with their words (the same
permutation); the tree is kept as it is: a word-shuffled sentence has no parse, so
its leaves are then the shuffled words in the original tree's shape.
``encode_pairs`` takes the inputs as raw lines beside each pair (the classifier of
``compsuite/toolkits/fairseq/classifier.py`` reads them from the raw streams).
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
SIDES = ("premise", "hypothesis")
#: the per-word inputs ``--pair-inputs`` may name
PAIR_INPUTS = ("pos", "tree", "chars")
#: a ``tree`` stream's shift and reduce; a ``chars`` stream's word separator
SHIFT, REDUCE, WORD_SEP = "S", "R", "<w>"


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
    pair_inputs: str = field(
        default="",
        metadata={"help": "per-word inputs loaded beside the words, a comma list of pos, "
                          "tree, chars (the tree and feature-based models)"})
    seed: int = II("common.seed")


# ----------------------------------------------------------------------------- helpers
def shuffle_words(tokens: torch.Tensor, pad: int, ids: Sequence[int], seed: int, epoch: int,
                  side: int) -> torch.Tensor:
    """Each row's real (non-pad) tokens permuted, the padding on the right untouched.
    Row r's permutation comes from a generator seeded with (seed, epoch, ids[r], side):
    the same for a given seed, epoch and example, different between epochs."""
    index = shuffle_index(tokens, pad, ids, seed, epoch, side)
    return tokens.gather(1, index)


def shuffle_index(tokens: torch.Tensor, pad: int, ids: Sequence[int], seed: int, epoch: int,
                  side: int) -> torch.Tensor:
    """The [B, T] positions :func:`shuffle_words` reads each row's tokens from (so
    that per-word inputs can follow their words)."""
    mask = tokens.ne(pad)
    lengths = mask.sum(1).tolist()
    B, T = tokens.shape
    index = np.tile(np.arange(T), (B, 1))
    for r, (n, i) in enumerate(zip(lengths, ids)):
        if n and not bool(mask[r, :n].all()):
            raise ValueError("shuffle_words expects right-padded rows")
        rng = np.random.default_rng([int(seed), int(epoch), int(i), int(side)])
        index[r, :n] = rng.permutation(n)
    return torch.from_numpy(index).to(tokens.device)


def parse_pair_inputs(value: str) -> tuple:
    """``--pair-inputs``' names, in :data:`PAIR_INPUTS` order (an unknown one is an
    error)."""
    names = [x.strip() for x in (value or "").split(",") if x.strip()]
    unknown = [x for x in names if x not in PAIR_INPUTS]
    if unknown:
        raise ValueError(f"--pair-inputs: unknown input(s) {', '.join(unknown)} (choose from "
                         f"{', '.join(PAIR_INPUTS)})")
    return tuple(x for x in PAIR_INPUTS if x in names)


def tree_children(shifts: np.ndarray) -> np.ndarray:
    """[n-1, 2] children of the internal nodes of a transition sequence (``shifts``:
    True for a shift, False for a reduce; already checked), in post-order: nodes
    0..n-1 are the words, n+k the k-th reduce."""
    n = int(shifts.sum())
    out = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    stack, word, k = [], 0, 0
    for is_shift in shifts.tolist():
        if is_shift:
            stack.append(word)
            word += 1
        else:
            out[k, 1], out[k, 0] = stack.pop(), stack.pop()
            stack.append(n + k)
            k += 1
    return out


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


def collate_trees(samples) -> torch.Tensor:
    """[n-1, 2] children arrays -> [B, max(T-1, 1), 2], -1 where no node is."""
    rows = max([len(c) for c in samples] + [1])
    out = np.full((len(samples), rows, 2), -1, dtype=np.int64)
    for r, c in enumerate(samples):
        out[r, :len(c)] = c
    return torch.from_numpy(out)


def chars_matrix(ids: np.ndarray, sep: int, pad: int) -> np.ndarray:
    """A ``chars`` line's ids (without ``</s>``) -> [words, longest word], padded."""
    words = np.split(ids, np.flatnonzero(ids == sep))
    words = [words[0]] + [w[1:] for w in words[1:]]      # drop each separator
    out = np.full((len(words), max(len(w) for w in words)), pad, dtype=np.int64)
    for i, w in enumerate(words):
        out[i, :len(w)] = w
    return out


def collate_chars(samples, pad: int) -> torch.Tensor:
    """[words, chars] arrays -> [B, T, C], padded on both axes."""
    T = max(a.shape[0] for a in samples)
    C = max(a.shape[1] for a in samples)
    out = np.full((len(samples), T, C), pad, dtype=np.int64)
    for r, a in enumerate(samples):
        out[r, :a.shape[0], :a.shape[1]] = a
    return torch.from_numpy(out)


class _TreeDataset(FairseqDataset):
    """Transitions (without ``</s>``) -> the children of their internal nodes
    (:func:`tree_children`); a batch is [B, max(T-1, 1), 2], -1 where no node is."""

    def __init__(self, base, shift: int):
        self.base, self.shift = base, shift
        self.sizes = base.sizes

    def __getitem__(self, index):
        return tree_children(self.base[index].numpy() == self.shift)

    def __len__(self):
        return len(self.base)

    def collater(self, samples):
        return collate_trees(samples)


class _CharsDataset(FairseqDataset):
    """A ``chars`` line (without ``</s>``) -> [words, longest word] character ids,
    right-padded; a batch is [B, T, C], padded on both axes."""

    def __init__(self, base, sep: int, pad: int):
        self.base, self.sep, self.pad = base, sep, pad
        self.sizes = base.sizes

    def __getitem__(self, index):
        return chars_matrix(self.base[index].numpy(), self.sep, self.pad)

    def __len__(self):
        return len(self.base)

    def collater(self, samples):
        return collate_chars(samples, self.pad)


class _Items:
    """A list of token tensors with ``sizes``, as :func:`check_pair_input` reads a
    binarised stream (each item ending with ``</s>``)."""

    def __init__(self, items):
        self.items = items
        self.sizes = np.array([len(t) for t in items], dtype=np.int64)

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)


def _flat(ds) -> tuple[np.ndarray, np.ndarray]:
    """(all tokens of an indexed dataset in one array, each item's start): a view of
    the memory-mapped file when its items lie in order one after another (as
    fairseq-preprocess writes them), else the items copied."""
    sizes = np.asarray(ds.sizes, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    index, buf = getattr(ds, "_index", None), getattr(ds, "_bin_buffer", None)
    if index is not None and buf is not None and len(sizes):
        width = np.dtype(index.dtype).itemsize
        pointers = np.asarray(index._pointers, dtype=np.int64)
        if np.array_equal(pointers, pointers[0] + starts * width):
            return np.frombuffer(buf, dtype=index.dtype, count=int(sizes.sum()),
                                 offset=int(pointers[0])), starts
    items = [np.asarray(ds[i], dtype=np.int64) for i in range(len(ds))]
    return (np.concatenate(items) if items else np.zeros(0, np.int64)), starts


def _per_item(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of ``values`` (one per token) over each item."""
    return np.add.reduceat(values, starts, dtype=np.int64) if len(starts) else starts


def check_pair_input(name: str, ds, words: np.ndarray, dictionary: Dictionary) -> list:
    """Per item of a binarised ``name`` stream (each ending with ``</s>``), what is
    wrong with it given the item's ``words`` (sentence lengths): a list of (line,
    reason), empty when all is well.  Vectorised over the whole stream."""
    flat, starts = _flat(ds)
    sizes = np.asarray(ds.sizes, dtype=np.int64)
    eos, bad = dictionary.eos(), []
    real = flat != eos
    length = _per_item(real, starts)
    if name == "pos":
        for i in np.flatnonzero(length != words)[:1]:
            bad.append((i + 1, f"{length[i]} tags for {words[i]} words"))
    elif name == "tree":
        shift, reduce = (dictionary.indices.get(x, -1) for x in (SHIFT, REDUCE))
        step = (flat == shift).astype(np.int8) - (flat == reduce).astype(np.int8)
        other = real & (step == 0)
        depth = np.cumsum(step, dtype=np.int64)
        before = np.where(starts > 0, depth[np.maximum(starts - 1, 0)], 0)
        lowest = np.minimum.reduceat(depth, starts) - before if len(starts) else starts
        final = depth[starts + sizes - 1] - before
        shifts = _per_item(step == 1, starts)
        for i in np.flatnonzero(_per_item(other, starts) > 0)[:1]:
            bad.append((i + 1, "a transition that is neither S nor R"))
        for i in np.flatnonzero((lowest < 1) | (final != 1))[:1]:
            bad.append((i + 1, "the transitions do not build one binary tree"))
        for i in np.flatnonzero(shifts != words)[:1]:
            bad.append((i + 1, f"{shifts[i]} shifts for {words[i]} words"))
    else:
        sep = flat == dictionary.indices.get(WORD_SEP, -1)
        ends = starts + np.maximum(length - 1, 0)
        empty = (length == 0) | sep[starts] | sep[ends] | (
            _per_item(np.append(sep[:-1] & sep[1:], False), starts) > 0)
        count = _per_item(sep, starts) + 1
        for i in np.flatnonzero(empty)[:1]:
            bad.append((i + 1, f"a word without characters (two {WORD_SEP} in a row, or one "
                               f"at an end)"))
        for i in np.flatnonzero(count != words)[:1]:
            bad.append((i + 1, f"{count[i]} words of characters for {words[i]} words"))
    return sorted(bad)


# ----------------------------------------------------------------------------- the task
@register_task("sentence_pair_classification", dataclass=SentencePairClassificationConfig)
class SentencePairClassificationTask(KeepEvaluationExamples, FairseqTask):
    cfg: SentencePairClassificationConfig

    def __init__(self, cfg, word_dictionary, label_dictionary, input_dictionaries=None):
        super().__init__(cfg)
        self.word_dict = word_dictionary
        self.label_dict = label_dictionary
        #: --pair-inputs name -> its dictionary (only those loaded)
        self.input_dicts = dict(input_dictionaries or {})
        self.epoch = 1
        self.embedding_stats = None

    @property
    def pair_inputs(self) -> tuple:
        """The per-word inputs loaded (``--pair-inputs``), in :data:`PAIR_INPUTS` order."""
        return tuple(self.input_dicts)

    def feature_dictionary(self, name: str) -> Optional[Dictionary]:
        """The dictionary of a loaded per-word input (``pos``, ``chars``; ``tree`` has
        one too: S and R), None when ``--pair-inputs`` did not name it."""
        return self.input_dicts.get(name)

    @staticmethod
    def load_input_dictionaries(data: str, names: Sequence[str]) -> dict:
        """``dict.premise_<name>.txt`` of each named input (an error naming the file
        and how to write it when absent)."""
        out = {}
        for name in names:
            path = os.path.join(data, f"dict.premise_{name}.txt")
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"--pair-inputs {name}: {path} not found; binarise the raw "
                    f"{{split}}.premise_{name} / {{split}}.hypothesis_{name} streams "
                    f"(write_fairseq_pairs; fairseq_plugins/doc.md)")
            d = Dictionary.load(path)
            hyp = os.path.join(data, f"dict.hypothesis_{name}.txt")
            if os.path.isfile(hyp) and Dictionary.load(hyp) != d:
                raise ValueError(f"{data}: dict.premise_{name}.txt and "
                                 f"dict.hypothesis_{name}.txt differ; binarise with "
                                 f"--joined-dictionary")
            out[name] = d
        return out

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
        names = parse_pair_inputs(getattr(cfg, "pair_inputs", ""))
        task = cls(cfg, words, labels, cls.load_input_dictionaries(cfg.data, names))
        logger.info(f"[words] dictionary: {len(words)} types; {task.num_classes} classes: "
                    f"{' '.join(task.class_names())}")
        for name, d in task.input_dicts.items():
            logger.info(f"[{name}] dictionary: {len(d)} types")
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

    def _streams(self, split: str, combine: bool = False) -> dict:
        """A binarised subset's streams: ``premise``, ``hypothesis`` (without their
        ``</s>``), ``labels`` (class indices), ``premise_sizes``, ``hypothesis_sizes``,
        and each ``--pair-inputs`` stream (``premise_pos``, ...; :meth:`_inputs`)."""
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
        out = {}
        for name, ds in (("premise", premise), ("hypothesis", hypothesis)):
            empty = np.flatnonzero(ds.sizes <= 1)   # only </s>
            if len(empty):
                raise ValueError(f"{split}.{name}: line {empty[0] + 1} is an empty sentence")
            out[f"{name}_sizes"] = ds.sizes - 1     # without </s>
            out[name] = StripTokenDataset(ds, self.word_dict.eos())
        eos, names = self.label_dict.eos(), self.class_names()
        labels = []
        for i in range(len(tgt)):
            t = tgt[i]
            if len(t) != 2 or int(t[1]) != eos or self.label_dict[int(t[0])] not in names:
                raise ValueError(f"{label_prefix}: line {i + 1} is not exactly one known class")
            labels.append(int(t[0]) - self.label_dict.nspecial)
        out["labels"] = labels
        out.update(self._inputs(split, combine, out))
        return out

    def _inputs(self, split: str, combine: bool, words: dict) -> dict:
        """The ``--pair-inputs`` streams of a subset (without ``</s>``), each checked
        against its sentences (:func:`check_pair_input`; an error names the split,
        side and line)."""
        out = {}
        for name, d in self.input_dicts.items():
            pair = os.path.join(self.cfg.data, f"{split}.premise_{name}-hypothesis_{name}.")
            for side in SIDES:
                ds = self._load(pair + f"{side}_{name}", d, combine, split)
                if len(ds) != len(words[side]):
                    raise ValueError(f"{split}: {len(ds)} lines of {side}_{name}, "
                                     f"{len(words[side])} {side}s")
                bad = check_pair_input(name, ds, np.asarray(words[f"{side}_sizes"]), d)
                if bad:
                    line, why = bad[0]
                    raise ValueError(f"{split}: {side} line {line}: its {name} input does not "
                                     f"fit the sentence: {why} ({pair}{side}_{name}.bin)")
                out[f"{side}_{name}"] = StripTokenDataset(ds, d.eos())
        return out

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
        streams = self._streams(split, combine)
        is_train = split == getattr(self.cfg, "train_subset", "train")
        added = 0
        if is_train and getattr(self.cfg, "augment_subsets", ""):
            streams, added = self._augmented(split, streams, epoch)
        p_sizes, h_sizes = streams["premise_sizes"], streams["hypothesis_sizes"]
        dataset = NestedDictionaryDataset(
            {"id": IdDataset(),
             "net_input": self._net_input(streams),
             "target": RawLabelDataset(streams["labels"]),
             "nsentences": NumSamplesDataset(),
             "ntokens": _SumDataset(p_sizes + h_sizes)},
            sizes=[np.maximum(p_sizes, h_sizes)])
        if is_train:
            with data_utils.numpy_seed(self.cfg.seed, epoch if added else 1):
                dataset = SortDataset(dataset, sort_order=[np.random.permutation(len(dataset))])
        self.datasets[split] = dataset
        logger.info(f"{split}: {len(dataset)} pairs")
        return dataset

    def _augmented(self, split: str, streams: dict, epoch: int) -> tuple:
        """The train streams plus this epoch's sample of the ``--augment-subsets``
        pool (:meth:`augmentation_sample`), every stream alike; and how many were
        added."""
        from fairseq.data import ConcatDataset

        pools = [x.strip() for x in self.cfg.augment_subsets.split(",") if x.strip()]
        subsets = [self._streams(name) for name in pools]
        total = sum(len(st["labels"]) for st in subsets)
        chosen = self.augmentation_sample(total, epoch)
        keys = [k for k in streams if k != "labels"]
        parts, labels = {k: [streams[k]] for k in keys}, list(streams["labels"])
        offset = 0
        for st in subsets:
            n = len(st["labels"])
            idx = chosen[(chosen >= offset) & (chosen < offset + n)] - offset
            if len(idx):
                for k in keys:
                    parts[k].append(st[k][idx] if k.endswith("_sizes") else _Subset(st[k], idx))
                labels += [st["labels"][i] for i in idx]
            offset += n
        out = {k: np.concatenate(v) if k.endswith("_sizes") else ConcatDataset(v)
               for k, v in parts.items()}
        out["labels"] = labels
        logger.info(f"epoch {epoch}: {len(chosen)} of {total} pairs of {','.join(pools)} added "
                    f"to {split}")
        return out, len(chosen)

    def _net_input(self, streams: dict) -> dict:
        """The ``net_input`` datasets: the words of each side, and its ``--pair-inputs``
        (see the module docstring for their shapes)."""
        pad = self.word_dict.pad()
        net = {}
        for side in SIDES:
            net[f"{side}_tokens"] = RightPadDataset(streams[side], pad_idx=pad)
            net[f"{side}_lengths"] = NumelDataset(streams[side], reduce=False)
        for name, d in self.input_dicts.items():
            for side in SIDES:
                ds = streams[f"{side}_{name}"]
                if name == "pos":
                    net[f"{side}_pos"] = RightPadDataset(ds, pad_idx=d.pad())
                elif name == "tree":
                    net[f"{side}_tree"] = _TreeDataset(ds, d.indices.get(SHIFT, -1))
                else:
                    net[f"{side}_chars"] = _CharsDataset(ds, d.indices.get(WORD_SEP, -1),
                                                         d.pad())
        return net

    def encode_pairs(self, pairs: Sequence) -> dict:
        """``net_input`` for (premise, hypothesis) strings, tokenised like the data
        (words split on white space; a word not in the dictionary is ``<unk>``).  With
        ``--pair-inputs``, each pair is (premise, hypothesis, inputs), ``inputs`` mapping
        ``premise_tree``, ``hypothesis_pos``, ... to their lines in the raw streams'
        format; they are checked against the words as the binarised ones are."""
        d, out = self.word_dict, {}
        for side, name in ((0, "premise"), (1, "hypothesis")):
            toks = [d.encode_line(p[side], add_if_not_exist=False, append_eos=False).long()
                    for p in pairs]
            if any(len(t) == 0 for t in toks):
                raise ValueError(f"an empty {name}")
            out[f"{name}_tokens"] = data_utils.collate_tokens(toks, d.pad())
            out[f"{name}_lengths"] = torch.tensor([len(t) for t in toks])
        for name, fd in self.input_dicts.items():
            for side in SIDES:
                out[f"{side}_{name}"] = self._encode_input(
                    name, side, fd, pairs, out[f"{side}_lengths"].tolist())
        return out

    def _encode_input(self, name: str, side: str, d: Dictionary, pairs, words) -> torch.Tensor:
        key = f"{side}_{name}"
        rows = []
        for i, (p, n) in enumerate(zip(pairs, words)):
            line = (p[2] if len(p) > 2 else {}).get(key)
            if line is None:
                raise ValueError(f"pair {i + 1}: no {key} (the model reads --pair-inputs "
                                 f"{','.join(self.pair_inputs)}: give each pair its lines "
                                 f"of the raw {{split}}.{key} stream)")
            ids = d.encode_line(line, add_if_not_exist=False, append_eos=True).long()
            bad = check_pair_input(name, _Items([ids]), np.array([n]), d)
            if bad:
                raise ValueError(f"pair {i + 1}: its {key} does not fit the sentence: "
                                 f"{bad[0][1]}")
            rows.append(ids[:-1].numpy())
        if name == "pos":
            return data_utils.collate_tokens([torch.from_numpy(r) for r in rows], d.pad())
        if name == "tree":
            shift = d.indices.get(SHIFT, -1)
            return collate_trees([tree_children(r == shift) for r in rows])
        sep = d.indices.get(WORD_SEP, -1)
        return collate_chars([chars_matrix(r, sep, d.pad()) for r in rows], d.pad())

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
        needed = tuple(getattr(type(model), "PAIR_INPUTS", ()) or ())
        missing = [x for x in needed if x not in self.input_dicts]
        if missing:
            raise ValueError(f"{type(model).__name__} reads {', '.join(needed)} beside the "
                             f"words: pass --pair-inputs {','.join(needed)} (missing: "
                             f"{', '.join(missing)})")
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
        """The batch with the words of each sentence permuted (see :func:`shuffle_words`),
        their tags and characters with them; the tree is kept as it is."""
        ids = sample["id"].tolist()
        net = dict(sample["net_input"])
        pad = self.word_dict.pad()
        for side, name in ((PREMISE, "premise"), (HYPOTHESIS, "hypothesis")):
            tokens = net[f"{name}_tokens"]
            index = shuffle_index(tokens, pad, ids, self.cfg.seed, epoch, side)
            net[f"{name}_tokens"] = tokens.gather(1, index)
            if f"{name}_pos" in net:
                net[f"{name}_pos"] = net[f"{name}_pos"].gather(1, index)
            if f"{name}_chars" in net:
                chars = net[f"{name}_chars"]
                net[f"{name}_chars"] = chars.gather(
                    1, index[:, :, None].expand(-1, -1, chars.size(2)))
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
