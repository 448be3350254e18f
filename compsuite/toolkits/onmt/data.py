"""OpenNMT-py's data writer: a dataset's raw text as OpenNMT-py's text corpus with
the vocabularies of its own ``onmt_build_vocab``.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import ToolkitError
from compsuite.foundation.io import atomic_open
from compsuite.toolkits.writing import (SPLITS, begin_writing, complete_writing, run_logged,
                                        toolkit_command)


def write_onmt(raw_dir: str | Path, out_dir: str | Path, splits: Sequence[str] = SPLITS,
               allow_unknown: bool = False) -> dict:
    """Copy the text corpus into ``out_dir`` and build ``src.vocab``/``tgt.vocab`` there
    with onmt_build_vocab over the training split."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    args = {"raw_dir": str(raw_dir), "splits": list(splits), "allow_unknown": allow_unknown}
    begun = begin_writing(raw_dir, out_dir, "onmt_build_vocab", args, splits, allow_unknown)
    if begun is None:
        return {"skipped": True}
    counts, tmp = begun
    for split in splits:
        for side in ("src", "tgt"):
            shutil.copyfile(raw_dir / f"{split}.{side}", tmp / f"{split}.{side}")
    config = tmp / "build_vocab.yaml"
    with atomic_open(config) as fh:
        # Paths are relative to the folder, so the folder can be moved as a whole.
        fh.write(
            "# onmt_build_vocab -config build_vocab.yaml (run from this folder)\n"
            "save_data: samples\nsrc_vocab: src.vocab\ntgt_vocab: tgt.vocab\n"
            "n_sample: -1\noverwrite: true\n"
            "data:\n  corpus_1:\n    path_src: train.src\n    path_tgt: train.tgt\n"
        )
    cmd = toolkit_command("onmt_build_vocab") + ["-config", "build_vocab.yaml"]
    log = tmp / "build_vocab.log"
    run_logged(cmd, log, "onmt_build_vocab", cwd=tmp)
    for name in ("src.vocab", "tgt.vocab"):
        if not (tmp / name).is_file() or (tmp / name).stat().st_size == 0:
            raise ToolkitError(f"onmt_build_vocab wrote no {name}; see {log}")
    return complete_writing(tmp, out_dir, "onmt_build_vocab", args, counts,
                     ("compsuite", "OpenNMT-py", "torch"))

