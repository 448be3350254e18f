"""PCFG SET (Hupkes et al. 2020): grammar, interpreter and corpus generators."""
from .generate import FULL, GENERATOR, SMALL, PCFGSetConfig, describe, generate  # noqa: F401
from .grammar import interpret, parse  # noqa: F401

#: Named corpus configurations, referred to by ``compsuite/experiments/pcfgset.yaml``.
CONFIGS = {"full": FULL, "small": SMALL}
