"""Loading fairseq and OpenNMT-py checkpoints under torch >= 2.6.

Since torch 2.6, ``torch.load`` defaults to ``weights_only=True``: it unpickles only
tensors, containers and an allow-list of types.  The toolkits' checkpoints carry a
few other objects, so their own loaders fail with ``UnpicklingError``:

both store their options as an ``argparse.Namespace`` (OpenNMT-py 3.5 its ``opt``,
fairseq 0.12 the ``args`` entry).  ``torch.serialization.get_unsafe_globals_in_checkpoint``
finds nothing else in checkpoints of either toolkit (checked by the tests).

The fix here is narrow on purpose.  ``weights_only`` stays on; we add exactly that
type to torch's allow-list (:func:`allow_toolkit_checkpoints`), and the
environment's startup hook (:mod:`compsuite._startup_hook`) calls it only in
processes that import fairseq or OpenNMT-py.  A checkpoint holding anything else
(an arbitrary class, a function) still fails to load.
"""
from __future__ import annotations

import argparse

_done = False


def toolkit_checkpoint_globals() -> list:
    """The non-tensor types found in fairseq and OpenNMT-py checkpoints."""
    return [argparse.Namespace]


def allow_toolkit_checkpoints() -> None:
    """Add :func:`toolkit_checkpoint_globals` to torch's ``weights_only`` allow-list
    (idempotent; a no-op on torch versions without ``add_safe_globals``)."""
    global _done
    if _done:
        return
    import torch

    add = getattr(torch.serialization, "add_safe_globals", None)
    if add is not None:
        add(toolkit_checkpoint_globals())
    _done = True
