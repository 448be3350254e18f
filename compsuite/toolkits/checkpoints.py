"""Toolkit checkpoints for models in the loop: which toolkit wrote a checkpoint file,
and the errors for a missing or unreadable one.  A checkpoint of any toolkit is loaded
through the backend of the toolkit that wrote it: :func:`compsuite.toolkits.load_checkpoint`.

Each loader imports its toolkit when called (through
:func:`compsuite.toolkit_noise.import_toolkit`, which keeps its per-batch logging to
warnings), and lets torch>=2.6 read the toolkit's checkpoints (see
``compsuite/torch_compat.py``).  A missing or unreadable checkpoint is a
:class:`~compsuite.foundation.errors.DataError` naming the file.
"""
from __future__ import annotations

import re
from pathlib import Path

from compsuite.foundation.errors import DataError


def existing(checkpoint: str | Path) -> Path:
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise DataError(f"checkpoint {checkpoint} not found")
    return checkpoint


EXPECTED = ("expected a fairseq or OpenNMT-py checkpoint, the .pt file training writes "
            "(e.g. checkpoints/checkpoint_best.pt)")


def unreadable(path: str | Path, error: Exception) -> DataError:
    """The error for a file torch cannot load as a checkpoint: what file was expected
    and why this one is not it (torch's own advice to turn ``weights_only`` off is left
    out: a toolkit checkpoint never needs it, see compsuite/torch_compat.py)."""
    text = str(error)
    found = re.search(r"GLOBAL ([\w.]+)", text)
    if found:
        why = f"it holds a {found.group(1)}, which no toolkit checkpoint holds"
    elif "Weights only load failed" in text or "PytorchStreamReader" in text or isinstance(
            error, (KeyError, EOFError)) or type(error) is OSError:
        why = "torch cannot read it: not a file torch wrote, or a truncated one"
    else:
        why = f"torch cannot read it: {type(error).__name__}: " + (
            text.splitlines()[0] if text else "unreadable")
    return DataError(f"{path}: not a checkpoint ({why}); {EXPECTED}")


def checkpoint_toolkit(path: str | Path) -> str:
    """'fairseq' or 'onmt', from what the checkpoint holds."""
    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    allow_toolkit_checkpoints()
    try:
        state = torch.load(existing(path), map_location="cpu")
    except DataError:
        raise
    except Exception as e:  # a text file, a truncated download, a foreign pickle
        raise unreadable(path, e) from None
    if isinstance(state, dict) and "cfg" in state and "model" in state:
        return "fairseq"
    if isinstance(state, dict) and "opt" in state and "vocab" in state:
        return "onmt"
    raise DataError(f"{path}: neither a fairseq nor an OpenNMT-py checkpoint; {EXPECTED}")
