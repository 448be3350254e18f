"""``--criterion sequence_classification``: cross-entropy over the classes, and the share
of correct predictions, logged as ``accuracy`` (0..100) for checkpoint selection."""

import math
from dataclasses import dataclass

import torch.nn.functional as F
from fairseq import metrics
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.dataclass import FairseqDataclass


@dataclass
class SequenceClassificationCriterionConfig(FairseqDataclass):
    pass


@register_criterion("sequence_classification", dataclass=SequenceClassificationCriterionConfig)
class SequenceClassificationCriterion(FairseqCriterion):
    def forward(self, model, sample, reduce=True):
        logits = model(**sample["net_input"])
        target = sample["target"].view(-1)
        loss = F.cross_entropy(logits.float(), target, reduction="sum" if reduce else "none")
        n = target.numel()
        ncorrect = (logits.argmax(-1) == target).sum()
        log = {"loss": loss.data, "ntokens": sample["ntokens"], "nsentences": n,
               "sample_size": n, "ncorrect": ncorrect.data}
        return loss, n, log

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        loss = sum(log.get("loss", 0) for log in logging_outputs)
        n = sum(log.get("sample_size", 0) for log in logging_outputs)
        ncorrect = sum(log.get("ncorrect", 0) for log in logging_outputs)
        metrics.log_scalar("loss", loss / max(n, 1) / math.log(2), n, round=3)
        metrics.log_scalar("accuracy", 100.0 * ncorrect / max(n, 1), n, round=2)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        return True


@register_criterion("ctlpp_classification", dataclass=SequenceClassificationCriterionConfig)
class CTLPPClassificationCriterion(SequenceClassificationCriterion):
    """The criterion's name before compsuite 0.2, kept so that older runs resume."""
