"""Toolkit checkpoints for models in the loop: what torch loads from a checkpoint file
(each backend recognises its own: :meth:`~compsuite.toolkits.base.Backend.owns_checkpoint`),
and the errors for a missing, unreadable or unowned one.  A checkpoint of any toolkit is loaded
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
from compsuite.processes import complete_checkpoint


def existing(checkpoint: str | Path) -> Path:
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise DataError(f"checkpoint {checkpoint} not found")
    return checkpoint


def whole(checkpoint: str | Path) -> Path:
    """``checkpoint``, there and whole (``torch.save`` wrote it to its end); a truncated
    one is a DataError naming it and, in a unit's folder, the folder to delete so that
    ``compsuite run`` trains its model again."""
    path = existing(checkpoint)
    if complete_checkpoint(path):
        return path
    folder = path.parent.parent   # <unit>/checkpoints/checkpoint_best.pt
    again = (f"delete {folder} and run again (its model is trained again)"
             if (folder / "train.json").is_file() else "use a whole copy of it")
    raise DataError(f"checkpoint {path} is unreadable (truncated?): {again}")


def expected() -> str:
    """What a checkpoint file was expected to be: one of the registered backends'
    (those whose :attr:`~compsuite.toolkits.base.Backend.checkpoint_file` is set), with
    the first one's example."""
    files = checkpoint_files()
    return (f"expected a {' or '.join(files)} checkpoint, the .pt file training writes "
            f"(e.g. {next(iter(files.values()))})")


def checkpoint_files() -> dict[str, str]:
    """Title -> example of each registered backend whose checkpoints are files."""
    from compsuite.toolkits import backends, title

    return {title(b.name): b.checkpoint_file for b in backends() if b.checkpoint_file}


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
    return DataError(f"{path}: not a checkpoint ({why}); {expected()}")


def load_state(path: str | Path):
    """What torch loads from the checkpoint file ``path`` (on the CPU); a file torch
    cannot load is a DataError (:func:`unreadable`)."""
    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    allow_toolkit_checkpoints()
    try:
        return torch.load(existing(path), map_location="cpu")
    except DataError:
        raise
    except Exception as e:  # a text file, a truncated download, a foreign pickle
        raise unreadable(path, e) from None


def not_owned(path: str | Path) -> DataError:
    """The error for a checkpoint file no registered backend owns."""
    titles = [f"{'an' if t[:1].lower() in 'aeiou' else 'a'} {t}" for t in checkpoint_files()]
    said = (f"neither {titles[0]} nor {titles[1]}" if len(titles) == 2
            else f"not {' or '.join(titles) or 'a toolkit'}")
    return DataError(f"{path}: {said} checkpoint; {expected()}")
