"""Overgeneralisation over training (Hupkes et al. 2020, section 6.2.5, Table 7):
evaluate every saved checkpoint on the exception inputs, against the exception
(memorised) and the original (rule-based) targets.

Written against the translator protocol: the checkpoints a training saved on its way,
of any toolkit, as its backend lists them (per step, per update or per epoch:
:func:`compsuite.toolkits.saved_checkpoints`).  Table 3's overgeneralisation number is
the peak of the overgeneralisation share.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.io import read_aligned

#: Table 7's profile: exact match with either target, the peak over checkpoints
SIGNATURE = Signature("overgeneralisation", "1",
                      {"match": "exact", "tok": "whitespace", "peak": "max"})


def listed(checkpoints) -> list[tuple[str, int, Path]]:
    """:func:`track`'s (kind, step/update/epoch, path) of checkpoints a backend listed
    (:class:`compsuite.toolkits.Checkpoint`)."""
    return [(c.kind, c.at, c.path) for c in checkpoints]


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
            "signature": SIGNATURE.format()}

