"""Loading fairseq and OpenNMT-py checkpoints under torch >= 2.6.

Since torch 2.6, ``torch.load`` defaults to ``weights_only=True``: it unpickles only
tensors, containers and an allow-list of types.  The toolkits' checkpoints carry a
few other objects, so their own loaders fail with ``UnpicklingError``:

* OpenNMT-py 3.5 stores its options as an ``argparse.Namespace``;
* fairseq stores NumPy scalars (e.g. the best validation loss) in its training state.

The fix here is narrow on purpose.  ``weights_only`` stays on; we add exactly the
types above to torch's allow-list (:func:`allow_toolkit_checkpoints`), and the
environment's startup hook (:mod:`compsuite._startup_hook`) calls it only in
processes that import fairseq or OpenNMT-py.  A checkpoint holding anything else
(an arbitrary class, a function) still fails to load.
"""
from __future__ import annotations

import argparse

_done = False


def toolkit_checkpoint_globals() -> list:
    """The non-tensor types found in fairseq and OpenNMT-py checkpoints."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core  # NumPy 2 renamed np.core to np._core
    types = [argparse.Namespace, core.multiarray.scalar, np.dtype]
    # NumPy >= 1.25 pickles dtypes as instances of per-type classes (np.dtypes.*DType)
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        for name in ("Float64DType", "Float32DType", "Int64DType", "Int32DType", "BoolDType"):
            if hasattr(dtypes, name):
                types.append(getattr(dtypes, name))
    return types


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
