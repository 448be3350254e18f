"""Keep every example of an evaluation set (a mix-in for the suite's tasks).

fairseq drops a final batch whose size is not a multiple of
``--required-batch-size-multiple`` (default 8; facebookresearch/fairseq#5036), so
validation metrics and ``fairseq-generate`` would silently skip up to 7 examples.
A task that mixes this in batches every split but the training split with a
multiple of 1; training batches keep the user's setting.
"""


class KeepEvaluationExamples:
    def get_batch_iterator(self, dataset, *args, **kwargs):
        if dataset is not self.datasets.get(getattr(self.cfg, "train_subset", "train")):
            if len(args) >= 5:  # required_batch_size_multiple is the 5th positional argument
                args = args[:4] + (1,) + args[5:]
            else:
                kwargs["required_batch_size_multiple"] = 1
        return super().get_batch_iterator(dataset, *args, **kwargs)
