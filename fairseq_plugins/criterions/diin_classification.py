"""``--criterion diin_classification``: ``sequence_classification``'s cross-entropy plus
the model's own regularisation terms in training, as DIIN's code adds them to its loss
(YichenGong/Densely-Interactive-Inference-Network, python/models/DIIN.py: the L2
penalty that grows along a sigmoid, and the penalty on the difference between the two
sentences' encoders; ``fairseq_plugins/models/nli_diin.py``, ``regularization_loss``).

The model's ``regularization_loss()`` is a per-batch mean term (TF adds it to the mean
cross-entropy); the loss here is summed over the batch and fairseq divides the gradient
by the batch size, so the term enters multiplied by the batch size.  Validation and
prediction see the plain cross-entropy; the logged ``loss`` is the cross-entropy only.

Registered when ``fairseq_plugins.models.nli_diin`` is imported (fairseq imports every
model module of the user directory), so no other file needs to import it."""

from fairseq.criterions import register_criterion

from .sequence_classification import (SequenceClassificationCriterion,
                                      SequenceClassificationCriterionConfig)


@register_criterion("diin_classification", dataclass=SequenceClassificationCriterionConfig)
class DIINClassificationCriterion(SequenceClassificationCriterion):
    def forward(self, model, sample, reduce=True):
        loss, n, log = super().forward(model, sample, reduce)
        if model.training:
            reg = model.regularization_loss()
            loss = loss + (reg * n if reduce else reg)
        return loss, n, log
