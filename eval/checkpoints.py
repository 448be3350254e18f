"""Loading toolkit checkpoints for models in the loop: which toolkit wrote a
checkpoint, and fairseq's loading (shared by the fairseq translator and classifier).

Each loader imports its toolkit when called, keeps the toolkit's per-batch logging
to warnings, and lets torch>=2.6 read the toolkit's checkpoints (see
``compsuite/torch_compat.py``).  A missing or unreadable checkpoint is a
:class:`~compsuite.data_prep.common.io.DataError` naming the file.
"""
from __future__ import annotations

import logging
from pathlib import Path

from compsuite.data_prep.common.io import DataError


def quiet(*loggers: str) -> None:
    """In-process inference logs every batch at INFO; keep the toolkits to warnings."""
    for name in loggers:
        logging.getLogger(name).setLevel(logging.WARNING)


def existing(checkpoint: str | Path) -> Path:
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise DataError(f"checkpoint {checkpoint} not found")
    return checkpoint


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
        raise DataError(f"{path}: not a loadable torch checkpoint ({type(e).__name__}: "
                        f"{str(e).splitlines()[0] if str(e) else 'unreadable'})") from None
    if isinstance(state, dict) and "cfg" in state and "model" in state:
        return "fairseq"
    if isinstance(state, dict) and "opt" in state and "vocab" in state:
        return "onmt"
    raise DataError(f"{path}: neither a fairseq nor an OpenNMT-py checkpoint")


def load_model(checkpoint: str | Path, data: str | Path | None = None,
               kind: str = "translator", toolkit: str | None = None, **generation):
    """A checkpoint of any toolkit as a translator or a classifier, by the backend of
    the toolkit that wrote it (``toolkit`` to say which).  ``data``: the folder in that
    toolkit's format the model was trained on (fairseq: its dictionaries);
    ``generation``: ``batch_size``, ``max_length``, ``beam``."""
    from compsuite.toolkits import Dataset, get_backend

    checkpoint = existing(checkpoint)
    toolkit = toolkit or checkpoint_toolkit(checkpoint)
    dataset = None if data is None else Dataset(Path(data).parent,
                                                formats={toolkit: Path(data)})
    return get_backend(toolkit).load(checkpoint, dataset, kind, generation)


def load_fairseq(checkpoint: str | Path, data: str | Path, **overrides):
    """``(models, cfg, task)`` of a checkpoint trained with ``--user-dir
    fairseq_plugins``, its task set up on the fairseq-binarised folder ``data`` (the
    dictionaries)."""
    from argparse import Namespace

    from fairseq import checkpoint_utils, utils

    from compsuite.registry import ROOT
    from compsuite.torch_compat import allow_toolkit_checkpoints

    quiet("fairseq")
    allow_toolkit_checkpoints()
    utils.import_user_module(Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    checkpoint = existing(checkpoint)
    if not Path(data).is_dir():
        raise DataError(f"{data}: no such fairseq data folder (the checkpoint's dictionaries)")
    return checkpoint_utils.load_model_ensemble_and_task(
        [str(checkpoint)], arg_overrides={"data": str(Path(data).resolve()), **overrides})
