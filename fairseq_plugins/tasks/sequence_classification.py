"""``--task ctlpp_classification``: classify a CTL++ input (functions, then a symbol,
written right to left) into the symbol it evaluates to.

Data: the suite's fairseq-binarised folder (``compsuite data ctlpp generate --toolkits
fairseq``, made with fairseq-preprocess): ``{split}.src-tgt.src`` holds the inputs and
``{split}.src-tgt.tgt`` the one-token targets; ``dict.tgt.txt`` lists the classes.
Subsets: ``valid`` (IID, for checkpoint selection), ``test`` (IID test) and ``test1``
(OOD test), so ``--valid-subset valid,test,test1`` logs all three during training.
Models take ``src_tokens``/``src_lengths`` and return class logits; the criterion is
``--criterion ctlpp_classification`` (cross-entropy, logs ``accuracy``).
"""

import logging
import os
from dataclasses import dataclass, field

import numpy as np
from fairseq.data import (Dictionary, IdDataset, NestedDictionaryDataset, NumelDataset,
                          NumSamplesDataset, RawLabelDataset, RightPadDataset, SortDataset,
                          data_utils)
from fairseq.dataclass import FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II, MISSING

logger = logging.getLogger(__name__)


@dataclass
class CTLPPClassificationConfig(FairseqDataclass):
    data: str = field(default=MISSING, metadata={"help": "the fairseq-binarised CTL++ folder"})
    max_positions: int = field(default=64, metadata={"help": "longest input, in tokens"})
    seed: int = II("common.seed")


@register_task("ctlpp_classification", dataclass=CTLPPClassificationConfig)
class CTLPPClassificationTask(FairseqTask):
    cfg: CTLPPClassificationConfig

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
        return len(labels) - labels.nspecial

    @property
    def num_classes(self) -> int:
        return self.num_classes_of(self.label_dict)

    def class_names(self) -> list:
        return [self.label_dict[i] for i in range(self.label_dict.nspecial, len(self.label_dict))]

    def load_dataset(self, split, combine=False, **kwargs):
        prefix = os.path.join(self.cfg.data, f"{split}.src-tgt.")
        src = data_utils.load_indexed_dataset(prefix + "src", self.src_dict, combine=combine)
        tgt = data_utils.load_indexed_dataset(prefix + "tgt", self.label_dict, combine=combine)
        if src is None or tgt is None:
            raise FileNotFoundError(f"CTL++ split '{split}' not found: {prefix}{{src,tgt}}")
        if len(src) != len(tgt):
            raise ValueError(f"{prefix}src has {len(src)} inputs but {prefix}tgt {len(tgt)}")
        labels = []
        for i in range(len(tgt)):
            t = tgt[i]
            if len(t) != 2 or int(t[0]) < self.label_dict.nspecial:   # one class and </s>
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
            with data_utils.numpy_seed(self.cfg.seed):
                dataset = SortDataset(dataset, sort_order=[np.random.permutation(len(dataset))])
        self.datasets[split] = dataset
        logger.info(f"{split}: {len(dataset)} examples")
        return dataset

    def get_batch_iterator(self, dataset, *args, **kwargs):
        """Evaluation sets keep every example (batch multiple 1; fairseq#5036)."""
        if dataset is not self.datasets.get("train"):
            if len(args) >= 5:
                args = args[:4] + (1,) + args[5:]
            else:
                kwargs["required_batch_size_multiple"] = 1
        return super().get_batch_iterator(dataset, *args, **kwargs)

    def max_positions(self):
        return self.cfg.max_positions

    @property
    def source_dictionary(self):
        return self.src_dict

    @property
    def target_dictionary(self):
        return self.label_dict
