"""``--task sequence_classification``: classify a token sequence into one of a set of
classes (CTL++: functions and a symbol -> the symbol they evaluate to).

Data: a fairseq-binarised folder (``fairseq-preprocess`` of ``{split}.src`` inputs and
``{split}.tgt`` one-token labels, as the suite's writer makes it):
``{split}.src-tgt.src`` holds the inputs and ``{split}.src-tgt.tgt`` the labels;
``dict.tgt.txt`` lists the classes.  Every subset fairseq-preprocess wrote can be
evaluated (CTL++: ``--valid-subset valid,test,test1`` logs the IID valid, IID test and
OOD test sets during training).  Models take ``src_tokens``/``src_lengths`` and return
class logits; the criterion is ``--criterion sequence_classification``
(cross-entropy, logs ``accuracy``).  Evaluation sets keep every example (see
``fairseq_plugins/evaluation_batches.py``).

Training batches: by default fairseq's own (a fixed random order, cut into batches
once, the batches shuffled each epoch).  ``--length-buckets --rebuild-batches`` batches
as the CTL++ authors' ``BucketedSampler`` does (RobertCsordas/ctlpp,
``framework/loader/sampler.py``): each epoch the examples are shuffled, as many as do
not fill a whole batch are left out of that epoch, the rest are sorted by length (the
shuffle decides the order within a length), cut into batches of ``--batch-size``, and
the batches are shuffled; so a batch holds inputs of one length, and the batches differ
from epoch to epoch.
"""

import logging
import os
from dataclasses import dataclass, field

from typing import Optional

import numpy as np
from fairseq.data import (BaseWrapperDataset, Dictionary, IdDataset, NestedDictionaryDataset,
                          NumelDataset, NumSamplesDataset, RawLabelDataset, RightPadDataset,
                          SortDataset, data_utils)
from fairseq.dataclass import FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II, MISSING

from ..evaluation_batches import KeepEvaluationExamples
from ..labels import class_names

logger = logging.getLogger(__name__)


@dataclass
class SequenceClassificationConfig(FairseqDataclass):
    data: str = field(default=MISSING, metadata={"help": "the fairseq-binarised folder"})
    max_positions: int = field(default=64, metadata={"help": "longest input, in tokens"})
    length_buckets: bool = field(default=False, metadata={
        "help": "training batches of one input length, drawn afresh each epoch (with "
                "--rebuild-batches), the examples that do not fill a batch left out"})
    rebuild_batches: bool = field(default=False, metadata={
        "help": "build the training batches again each epoch (fairseq's own option)"})
    seed: int = II("common.seed")
    batch_size: Optional[int] = II("dataset.batch_size")


class LengthBuckets(BaseWrapperDataset):
    """Training order for length-bucketed batches (see the module's docstring);
    fairseq seeds numpy with seed + epoch around :meth:`ordered_indices`."""

    def __init__(self, dataset, sizes, batch_size: Optional[int]):
        super().__init__(dataset)
        self._sizes = np.asarray(sizes)
        self.batch_size = batch_size

    def ordered_indices(self):
        order = np.random.permutation(len(self._sizes))
        left_out = len(order) % self.batch_size if self.batch_size else 0
        if left_out:
            order = order[:len(order) - left_out]
        return order[np.argsort(self._sizes[order], kind="stable")]

    @property
    def sizes(self):
        return self._sizes

    @property
    def can_reuse_epoch_itr_across_epochs(self):
        return True


@register_task("sequence_classification", dataclass=SequenceClassificationConfig)
class SequenceClassificationTask(KeepEvaluationExamples, FairseqTask):
    cfg: SequenceClassificationConfig

    def __init__(self, cfg, source_dictionary, label_dictionary):
        super().__init__(cfg)
        self.src_dict = source_dictionary
        self.label_dict = label_dictionary

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        src = Dictionary.load(os.path.join(cfg.data, "dict.src.txt"))
        labels = Dictionary.load(os.path.join(cfg.data, "dict.tgt.txt"))
        logger.info(f"[input] dictionary: {len(src)} types; {cls.num_classes_of(labels)} classes")
        return cls(cfg, src, labels)

    @staticmethod
    def num_classes_of(labels: Dictionary) -> int:
        """The classes in ``dict.tgt.txt``, without fairseq-preprocess's filler symbols
        (fairseq_plugins/labels.py)."""
        return len(class_names(labels))

    @property
    def num_classes(self) -> int:
        return self.num_classes_of(self.label_dict)

    def class_names(self) -> list:
        return class_names(self.label_dict)

    def load_dataset(self, split, combine=False, **kwargs):
        prefix = os.path.join(self.cfg.data, f"{split}.src-tgt.")
        src = data_utils.load_indexed_dataset(prefix + "src", self.src_dict, combine=combine)
        tgt = data_utils.load_indexed_dataset(prefix + "tgt", self.label_dict, combine=combine)
        if src is None or tgt is None:
            raise FileNotFoundError(f"split '{split}' not found: {prefix}{{src,tgt}}")
        if len(src) != len(tgt):
            raise ValueError(f"{prefix}src has {len(src)} inputs but {prefix}tgt {len(tgt)}")
        labels, n = [], self.num_classes
        for i in range(len(tgt)):
            t = tgt[i]
            if len(t) != 2 or not 0 <= int(t[0]) - self.label_dict.nspecial < n:  # class, </s>
                raise ValueError(f"{prefix}tgt: line {i + 1} is not exactly one known class")
            labels.append(int(t[0]) - self.label_dict.nspecial)
        dataset = NestedDictionaryDataset(
            {"id": IdDataset(),
             "net_input": {"src_tokens": RightPadDataset(src, pad_idx=self.src_dict.pad()),
                           "src_lengths": NumelDataset(src, reduce=False)},
             "target": RawLabelDataset(labels),
             "nsentences": NumSamplesDataset(),
             "ntokens": NumelDataset(src, reduce=True)},
            sizes=[src.sizes])
        if split == getattr(self.cfg, "train_subset", "train"):
            if self.cfg.length_buckets:
                if not self.cfg.rebuild_batches:
                    raise ValueError("--length-buckets needs --rebuild-batches (batches "
                                     "drawn afresh each epoch)")
                dataset = LengthBuckets(dataset, src.sizes, self.cfg.batch_size)
            else:
                with data_utils.numpy_seed(self.cfg.seed):
                    dataset = SortDataset(dataset,
                                          sort_order=[np.random.permutation(len(dataset))])
        self.datasets[split] = dataset
        logger.info(f"{split}: {len(dataset)} examples")
        return dataset

    def max_positions(self):
        return self.cfg.max_positions

    @property
    def source_dictionary(self):
        return self.src_dict

    @property
    def target_dictionary(self):
        return self.label_dict


@register_task("ctlpp_classification", dataclass=SequenceClassificationConfig)
class CTLPPClassificationTask(SequenceClassificationTask):
    """The task's name before compsuite 0.2, kept so that older checkpoints load."""
