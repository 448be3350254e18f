"""compsuite's fairseq plugins, loaded with ``--user-dir fairseq_plugins``.

fairseq imports this package as the top-level module ``fairseq_plugins`` and then
itself imports every module under ``tasks/`` and ``models/`` (which register with
fairseq's decorators).  Criteria are not auto-imported: import them here.

Do not import this package under any other name (e.g. ``compsuite.fairseq_plugins``):
fairseq would register every component twice and fail.  In multi-worker training,
fairseq re-imports ``--user-dir`` in every spawned worker; a relative path is
resolved against the working directory, which spawned workers share.
"""
# fairseq loads checkpoints with torch.load; allow its few non-tensor types under
# torch>=2.6's weights_only=True (see compsuite/torch_compat.py).  The environment's
# startup hook already does this; repeating it covers environments without the hook.
from compsuite.torch_compat import allow_toolkit_checkpoints

allow_toolkit_checkpoints()

# Note for plugin authors: no ``from __future__ import annotations`` in modules that
# define fairseq config dataclasses; fairseq reads the field types at run time.

# Criteria are not imported by fairseq from a user dir: register ours here.
from . import criterions  # noqa: E402,F401
from .criterions import sequence_classification  # noqa: E402,F401
# Nor optimizers.
from .optim import adagrad_accumulator  # noqa: E402,F401
