"""``--task translation_seq_acc``: fairseq's translation task plus sequence accuracy.

Every string-to-string task of the suite (PCFG SET, ...) is scored by exact match of
the whole output.  With ``--eval-accuracy`` this task decodes the validation set
greedily at every validation and logs ``seq_acc`` (0..100) beside the loss, so it
can select checkpoints: ``--best-checkpoint-metric seq_acc
--maximize-best-checkpoint-metric``.  The comparison is the suite's own
:func:`compsuite.eval.metrics.accuracy.matches`, the same function that scores test
outputs, so validation and test numbers mean the same thing.
"""

import logging
from argparse import Namespace
from dataclasses import dataclass, field

from fairseq import metrics, utils
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from compsuite.eval.metrics.accuracy import matches

from ..evaluation_batches import KeepEvaluationExamples

logger = logging.getLogger(__name__)


@dataclass
class TranslationSeqAccConfig(TranslationConfig):
    eval_accuracy: bool = field(
        default=False, metadata={"help": "decode the validation set greedily and log seq_acc"}
    )
    eval_accuracy_print_samples: bool = field(
        default=False, metadata={"help": "log one hypothesis and reference per validation"}
    )


@register_task("translation_seq_acc", dataclass=TranslationSeqAccConfig)
class TranslationSeqAccTask(KeepEvaluationExamples, TranslationTask):
    """Evaluation sets keep every sentence (see ``fairseq_plugins/evaluation_batches.py``)."""

    cfg: TranslationSeqAccConfig

    def build_model(self, cfg, from_checkpoint=False):
        model = super().build_model(cfg, from_checkpoint)
        if self.cfg.eval_accuracy:
            self.accuracy_generator = self.build_generator([model], Namespace(beam=1))
        return model

    def valid_step(self, sample, model, criterion):
        loss, sample_size, logging_output = super().valid_step(sample, model, criterion)
        if self.cfg.eval_accuracy:
            hyps, refs = self._greedy_outputs(sample, model)
            ok = matches(hyps, refs)
            logging_output["_acc_correct"] = sum(ok)
            logging_output["_acc_total"] = len(ok)
            if self.cfg.eval_accuracy_print_samples and hyps:
                logger.info("example hypothesis: %s", hyps[0])
                logger.info("example reference: %s", refs[0])
        return loss, sample_size, logging_output

    def _greedy_outputs(self, sample, model):
        gen_out = self.inference_step(self.accuracy_generator, [model], sample, prefix_tokens=None)
        pad = self.tgt_dict.pad()
        hyps = [self.tgt_dict.string(out[0]["tokens"].int().cpu()) for out in gen_out]
        refs = [self.tgt_dict.string(utils.strip_pad(t, pad).int().cpu(), unk_string="<unk-ref>")
                for t in sample["target"]]
        return hyps, refs

    def reduce_metrics(self, logging_outputs, criterion):
        super().reduce_metrics(logging_outputs, criterion)
        if not self.cfg.eval_accuracy:
            return
        total = sum(int(log.get("_acc_total", 0)) for log in logging_outputs)
        if total == 0:
            return
        metrics.log_scalar("_acc_correct", sum(int(log.get("_acc_correct", 0))
                                               for log in logging_outputs))
        metrics.log_scalar("_acc_total", total)

        def seq_acc(meters):
            return round(100.0 * meters["_acc_correct"].sum / meters["_acc_total"].sum, 2)

        metrics.log_derived("seq_acc", seq_acc)


@register_task("pcfgset_translation", dataclass=TranslationSeqAccConfig)
class PCFGSetTranslationTask(TranslationSeqAccTask):
    """The task's name before compsuite 0.2, kept so that older checkpoints load."""
