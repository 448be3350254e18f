"""``--optimizer adagrad_acc``: Adagrad whose squared-gradient accumulators start at
``--initial-accumulator-value`` (default 0.1) instead of fairseq's 0.

Why: no code of the decomposable attention model (Parikh et al. 2016) was released;
the replication harvardnlp/decomp-attn (``utils.lua``, ``adagrad_step``; its README:
it "essentially replicates the results") trains it with Adagrad whose accumulators
start at 0.1, "to be consistent with tensorflow".  fairseq's ``adagrad`` (``torch.optim.Adagrad`` with its defaults) starts
them at 0, so its first update moves every weight with a gradient by the full rate
(0.05), whatever the gradient's size.  Otherwise this is ``torch.optim.Adagrad``
(``eps`` 1e-10, no learning-rate decay).
"""
from dataclasses import dataclass, field
from typing import List

import torch
from fairseq.dataclass import FairseqDataclass
from fairseq.optim import FairseqOptimizer, register_optimizer
from omegaconf import II


@dataclass
class AdagradAccumulatorConfig(FairseqDataclass):
    initial_accumulator_value: float = field(default=0.1, metadata={
        "help": "starting value of every squared-gradient accumulator (TensorFlow's 0.1)"})
    weight_decay: float = field(default=0.0, metadata={"help": "weight decay"})
    lr: List[float] = II("optimization.lr")


@register_optimizer("adagrad_acc", dataclass=AdagradAccumulatorConfig)
class AdagradAccumulator(FairseqOptimizer):
    def __init__(self, cfg, params):
        super().__init__(cfg)
        self._optimizer = torch.optim.Adagrad(params, **self.optimizer_config)

    @property
    def optimizer_config(self):
        return {"lr": self.cfg.lr[0], "weight_decay": self.cfg.weight_decay,
                "initial_accumulator_value": self.cfg.initial_accumulator_value}

    @property
    def supports_flat_params(self):
        return False
