"""Overgeneralisation over training (Hupkes et al. 2020, section 6.2.5, Table 7):
evaluate every saved checkpoint on the exception inputs, against the exception
(memorised) and the original (rule-based) targets.

Written against the translator protocol: fairseq's per-epoch ``checkpointN.pt`` (or
``checkpoint_E_U.pt``) and OpenNMT-py's ``model_step_N.pt`` alike.  Table 3's
overgeneralisation number is the peak of the overgeneralisation share.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_aligned

PATTERNS = (("step", re.compile(r"^model_step_(\d+)\.pt$")),      # OpenNMT-py
            ("update", re.compile(r"^checkpoint_\d+_(\d+)\.pt$")),  # fairseq, --save-interval-updates
            ("epoch", re.compile(r"^checkpoint(\d+)\.pt$")))        # fairseq, per epoch


def list_checkpoints(folder: str | Path) -> list[tuple[str, int, Path]]:
    """(kind, step/update/epoch, path) in training order; one kind per folder
    (steps, else updates, else epochs)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: no such checkpoint folder")
    for kind, rx in PATTERNS:
        found = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := rx.match(p.name)))
        if found:
            return [(kind, n, p) for n, p in found]
    raise DataError(f"{folder}: no per-epoch or per-step checkpoints (fairseq: do not pass "
                    "--no-epoch-checkpoints; OpenNMT-py: keep_checkpoint -1)")


def profile(outputs: Sequence[str], exception_targets: Sequence[str],
            original_targets: Sequence[str]) -> dict:
    """Shares of outputs equal to the exception target (memorisation), to the original
    target (overgeneralisation), or to neither."""
    n = len(outputs)
    if not (n == len(exception_targets) == len(original_targets)) or n == 0:
        raise ValueError("outputs and both target lists must be aligned and non-empty")
    mem = sum(o.split() == e.split() for o, e in zip(outputs, exception_targets))
    over = sum(o.split() == r.split() and o.split() != e.split()
               for o, e, r in zip(outputs, exception_targets, original_targets))
    return {"memorisation": mem / n, "overgeneralisation": over / n,
            "neither": (n - mem - over) / n, "n": n}


def read_exception_set(prefix: str | Path) -> tuple[list[str], list[str], list[str]]:
    """``{prefix}_exception.src``, ``{prefix}_exception.tgt`` and ``{prefix}_original.tgt``."""
    prefix = str(prefix)
    src, exc, orig = read_aligned(prefix + "_exception.src", prefix + "_exception.tgt",
                                  prefix + "_original.tgt")
    return src, exc, orig


def track(checkpoints: list[tuple[str, int, Path]], load: Callable[[Path], object],
          sources: list[str], exception_targets: list[str], original_targets: list[str],
          progress: bool = False, desc: str = "checkpoints") -> dict:
    """Profile per checkpoint (``load`` makes a translator from a checkpoint path);
    ``progress``: a bar (``desc``) over the checkpoints."""
    from tqdm import tqdm

    rows = []
    for kind, n, path in tqdm(checkpoints, desc=desc, unit="checkpoint", disable=not progress):
        outputs = load(path).translate(sources)
        rows.append({"checkpoint": str(path), "kind": kind, "at": n,
                     **profile(outputs, exception_targets, original_targets)})
    peak = max(rows, key=lambda r: r["overgeneralisation"])
    return {"profile": rows, "peak_overgeneralisation": peak["overgeneralisation"],
            "peak_at": {"kind": peak["kind"], "at": peak["at"]},
            "final": {k: rows[-1][k] for k in ("memorisation", "overgeneralisation", "neither")},
            "signature": "metric:overgeneralisation|match:exact|tok:whitespace|peak:max|version:1"}

