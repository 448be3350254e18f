"""The evaluations and accuracy breakdowns that studies register by name.

A study's evaluation modules (``eval/<study>/``) register theirs here with the
decorators; a study's YAML names an evaluation, ``compsuite eval accuracy --breakdown``
a breakdown.  The registries sit below the studies, eval and the registry, so that all
of them import them and none imports another for them (docs/architecture.md,
"Layers").  Nothing here names a study.
"""
from __future__ import annotations

from typing import Callable

from compsuite.foundation.names import Registry

#: How a test's model is scored: name -> function(context) -> result dict.  Studies
#: register theirs with :func:`evaluation`; their YAML names them.
EVALUATIONS: Registry[Callable] = Registry("evaluation")

#: ``compsuite eval accuracy --breakdown NAME``: name -> function(source) -> {feature: value}.
BREAKDOWNS: Registry[Callable[[str], dict]] = Registry("breakdown")


def evaluation(name: str):
    """Decorator: register an evaluation under ``name``."""
    def register(fn):
        EVALUATIONS.register(name, fn)
        return fn
    return register


def breakdown(name: str):
    """Decorator: register a breakdown function (source -> features) under ``name``."""
    def register(fn):
        BREAKDOWNS.register(name, fn)
        return fn
    return register
