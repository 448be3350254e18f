"""fairseq checkpoints loaded for models in the loop: the checkpoint with its task
set up on the data folder (the dictionaries), and a clear error where the two do not fit.
"""
from __future__ import annotations

import re
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.toolkits.checkpoints import existing, whole


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
            whole(checkpoint)   # a truncated checkpoint: named
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
            whole(checkpoint)   # a truncated checkpoint: named
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

