"""What the toolkits' data writers share (``compsuite/toolkits/<toolkit>/data.py``):
finding a toolkit's console command, running it with its log, and the checks every
writer makes first: the evaluation splits use no token absent from training (a clear
error naming file, line and token; ``allow_unknown`` to accept them, as some
generalisation tests deliberately do) and the sides of each split are aligned.  Every
writer writes into a temporary folder, moves it into place and leaves a manifest
(:func:`begin_writing`, :func:`complete_writing`).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError, ToolkitError
from compsuite.foundation.io import iter_lines
from compsuite.foundation.manifest import is_complete, write_manifest
from compsuite.processes import run

SPLITS = ("train", "valid", "test")


def toolkit_command(name: str) -> list[str]:
    """A toolkit console script from the running environment (beside ``sys.executable``)."""
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return [str(local)]
    found = shutil.which(name)
    if not found:
        raise ToolkitError(f"'{name}' not found; run scripts/setup_env.sh first")
    return [found]


def run_logged(cmd: Sequence[str], log: Path, what: str, cwd: Path | None = None) -> None:
    """Run a toolkit command, its output into ``log``; on failure show the log's tail."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        rc = run(list(cmd), stdout=fh, stderr=subprocess.STDOUT, cwd=cwd)
    if rc != 0:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-15:])
        raise ToolkitError(f"{what} failed (exit {rc}); log {log}:\n{tail}")


def vocabulary(path: Path) -> set[str]:
    vocab: set[str] = set()
    for line in iter_lines(path):
        vocab.update(line.split())
    return vocab


def check_known_tokens(raw_dir: Path, splits: Sequence[str], sides=("src", "tgt")) -> dict:
    """Raise :class:`DataError` at the first token of a non-training split that never
    occurs in training (per side).  Returns the vocabulary sizes."""
    sizes = {}
    for side in sides:
        vocab = vocabulary(raw_dir / f"train.{side}")
        sizes[side] = len(vocab)
        for split in splits:
            if split == "train":
                continue
            path = raw_dir / f"{split}.{side}"
            for lineno, line in enumerate(iter_lines(path), start=1):
                for tok in line.split():
                    if tok not in vocab:
                        raise DataError(
                            f"{path}: line {lineno}: token {tok!r} never occurs in "
                            f"{raw_dir / f'train.{side}'} (pass allow_unknown to accept)"
                        )
    return sizes


def check_aligned(raw_dir: Path, splits: Sequence[str]) -> dict[str, int]:
    counts = {}
    for split in splits:
        n_src = sum(1 for _ in iter_lines(raw_dir / f"{split}.src"))
        n_tgt = sum(1 for _ in iter_lines(raw_dir / f"{split}.tgt"))
        if n_src != n_tgt:
            raise DataError(f"{raw_dir / f'{split}.src'} has {n_src} lines but "
                            f"{raw_dir / f'{split}.tgt'} has {n_tgt}")
        if n_src == 0:
            raise DataError(f"{raw_dir / f'{split}.src'} is empty")
        counts[split] = n_src
    return counts


def begin_writing(raw_dir: Path, out_dir: Path, writer: str, args: dict, splits: Sequence[str],
           allow_unknown: bool) -> tuple[dict, Path] | None:
    """None when ``out_dir`` already holds this output (by manifest); otherwise check
    the input and return (line counts, a fresh temporary folder beside ``out_dir``)."""
    if is_complete(out_dir, writer, args):
        return None
    counts = check_aligned(raw_dir, splits)
    if not allow_unknown:
        check_known_tokens(raw_dir, splits)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return counts, tmp


def complete_writing(tmp: Path, out_dir: Path, writer: str, args: dict, counts: dict,
              packages: Sequence[str], extra: dict | None = None) -> dict:
    """Move the finished temporary folder into place and write its manifest."""
    files = sorted(p.name for p in tmp.iterdir() if p.is_file())
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    return write_manifest(out_dir, generator=writer, generator_version="1", seed=None,
                          args=args, files=files, counts=counts, packages=packages,
                          extra=extra)



