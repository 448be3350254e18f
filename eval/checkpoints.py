"""Toolkit checkpoints for models in the loop: which toolkit wrote a checkpoint,
removing one, and fairseq's loading (shared by the fairseq translator and classifier).
A checkpoint of any toolkit is loaded through the backend of the toolkit that wrote it:
:func:`compsuite.toolkits.load_checkpoint`.

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


def remove_checkpoint(path: Path) -> None:
    """Delete a checkpoint: a file (fairseq, OpenNMT-py) or a folder (hf)."""
    import shutil

    if Path(path).is_dir():
        shutil.rmtree(path)
    else:
        Path(path).unlink()


def load_fairseq(checkpoint: str | Path, data: str | Path, **overrides):
    """``(models, cfg, task)`` of a checkpoint trained with ``--user-dir
    fairseq_plugins``, its task set up on the fairseq-binarised folder ``data`` (the
    dictionaries)."""
    from argparse import Namespace

    from compsuite.toolkit_noise import import_toolkit

    import_toolkit("fairseq")    # first: fairseq's import-time noise kept off the terminal
    from fairseq import checkpoint_utils, utils

    from compsuite.foundation.checkout import ROOT
    from compsuite.torch_compat import allow_toolkit_checkpoints

    allow_toolkit_checkpoints()
    utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    checkpoint = existing(checkpoint)
    if not Path(data).is_dir():
        raise DataError(f"{data}: no such fairseq data folder (the checkpoint's dictionaries)")
    try:
        return checkpoint_utils.load_model_ensemble_and_task(
            [str(checkpoint)], arg_overrides={"data": str(Path(data).resolve()), **overrides})
    except RuntimeError as e:
        sizes = size_mismatches(str(e))
        if not sizes:
            raise
        raise DataError(f"checkpoint {checkpoint} does not fit the data folder {data}: the "
                        f"dictionary sizes differ ({sizes}); use the fairseq-bin folder the "
                        "checkpoint was trained on") from None
    except FileNotFoundError as e:
        if not e.filename or Path(e.filename).parent.resolve() != Path(data).resolve():
            raise
        raise DataError(f"{data}: no {Path(e.filename).name}, a dictionary checkpoint "
                        f"{checkpoint} needs (is it the fairseq-bin folder the checkpoint was "
                        "trained on?)") from None
    except Exception as e:  # fairseq raises a bare Exception for a folder without splits
        if "Could not infer language pair" not in str(e):
            raise
        raise DataError(f"{data}: not a fairseq-bin folder (no binarised splits such as "
                        "train.<src>-<tgt>.<src>.idx to read the language pair from); use the "
                        f"folder fairseq-preprocess wrote for checkpoint {checkpoint}") from None


def size_mismatches(message: str, most: int = 3) -> str:
    """'name: AxB in the checkpoint, CxB with the data's dictionaries; ...' from torch's
    ``load_state_dict`` error, or '' when it reports no size mismatch."""
    found = re.findall(r"size mismatch for ([\w.]+): copying a param with shape "
                       r"torch\.Size\(\[([\d, ]*)\]\) from checkpoint, the shape in current "
                       r"model is torch\.Size\(\[([\d, ]*)\]\)", message)
    shape = lambda dims: "x".join(d.strip() for d in dims.split(","))  # noqa: E731
    parts = [f"{name}: {shape(ck)} in the checkpoint, {shape(now)} with the data's "
             "dictionaries" for name, ck, now in found[:most]]
    if len(found) > most:
        parts.append(f"and {len(found) - most} more")
    return "; ".join(parts)
