"""Readers for the prediction files the PCFG SET authors released with the paper
(``model_predictions/<model>/<test>/...`` in their repository), and one scorer that
walks such a tree with compsuite's own metrics.

Formats:

* task, systematicity, productivity: ``run=N.txt``, a TSV with the header
  ``source<TAB>target<TAB>prediction`` (read by
  :func:`compsuite.eval.readers.predictions.read_tsv`);
* substitutivity: ``run=N.txt`` and ``run=N_synonym.txt``, two such TSVs aligned
  line by line (an input and its synonym twin);
* localism: ``run=N.txt``, blocks that start with a line of dashes; each block holds
  ``input -> output`` lines (the unrolled steps, each with the model's output, then
  the whole input with its output) and a last line ``True`` or ``False`` (whether the
  two outputs agree);
* overgeneralisation: ``*ratio=R_run=N.txt``, a log with ``Epoch E`` headers, each
  followed by ``Adapted - Sequence Accuracy[:] X`` (share of exception inputs given
  their exception target: memorisation) and ``Original - Sequence Accuracy[:] Y``
  (share given the rule-based target: overgeneralisation).

Malformed input raises :class:`DataError` naming the file and line.
"""
from __future__ import annotations

import re
import statistics as st
from collections import defaultdict
from pathlib import Path

from compsuite.eval.readers.predictions import read_tsv
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_lines

_ARROW = " -> "
_EPOCH = re.compile(r"^Epoch (\d+)$")
_ACC = re.compile(r"^(Adapted|Original) - Sequence Accuracy:? ([0-9.eE+-]+)$")
_RUN = re.compile(r"run=(\d+)")
_RATIO = re.compile(r"ratio=([0-9.]+)")


def read_localism_log(path: str | Path) -> list[dict]:
    """Blocks of a released localism file: ``{"steps": [(input, output), ...],
    "original": (input, output), "flag": bool, "line": first line number}``."""
    blocks, cur, start = [], [], None

    def close(lineno: int) -> None:
        if not cur:
            return
        *pairs, flag = cur
        if flag[1] not in ("True", "False") or len(pairs) < 2:
            raise DataError(f"{path}:{lineno}: a localism block must end with True or False "
                            "after at least one unrolled step and the whole input")
        blocks.append({"steps": [p[1] for p in pairs[:-1]], "original": pairs[-1][1],
                       "flag": flag[1] == "True", "line": start})

    for i, line in enumerate(read_lines(path), 1):
        if line.startswith("---"):
            close(i)
            cur, start = [], i + 1
            continue
        if not line.strip():
            continue
        if line in ("True", "False"):
            cur.append((i, line))
            continue
        if _ARROW not in line:
            raise DataError(f"{path}:{i}: expected 'input -> output', found {line[:80]!r}")
        src, out = line.split(_ARROW, 1)
        cur.append((i, (src.strip(), out.strip())))
    close(i + 1 if blocks or cur else 1)
    if not blocks:
        raise DataError(f"{path}: no localism blocks")
    return blocks


def read_overgeneralisation_log(path: str | Path) -> dict:
    """The per-epoch profile of a released overgeneralisation log, in the form of
    :func:`compsuite.eval.pcfgset.overgeneralisation.track` (so it plots the same way)."""
    rows, epoch = [], None
    for i, line in enumerate(read_lines(path), 1):
        line = line.strip()
        if m := _EPOCH.match(line):
            epoch = {"kind": "epoch", "at": int(m.group(1))}
            rows.append(epoch)
        elif m := _ACC.match(line):
            if epoch is None:
                raise DataError(f"{path}:{i}: an accuracy line before any 'Epoch N' line")
            key = "memorisation" if m.group(1) == "Adapted" else "overgeneralisation"
            epoch[key] = float(m.group(2))
    for r in rows:
        if not {"memorisation", "overgeneralisation"} <= set(r):
            raise DataError(f"{path}: epoch {r['at']} lacks an Adapted or Original line")
        r["neither"] = max(0.0, 1 - r["memorisation"] - r["overgeneralisation"])
    if not rows:
        raise DataError(f"{path}: no 'Epoch N' sections")
    peak = max(rows, key=lambda r: r["overgeneralisation"])
    return {"profile": rows, "peak_overgeneralisation": peak["overgeneralisation"],
            "peak_at": {"kind": "epoch", "at": peak["at"]},
            "final": {k: rows[-1][k] for k in ("memorisation", "overgeneralisation", "neither")},
            "source": str(path)}


def _run_number(path: Path) -> int:
    m = _RUN.search(path.name)
    if not m:
        raise DataError(f"{path}: no 'run=N' in the file name")
    return int(m.group(1))


def score_released(root: str | Path) -> list[dict]:
    """Score every released file under ``root`` (``<model>/<test>/...``) with
    compsuite's metrics: one row per model, test and run."""
    from compsuite.eval.metrics.accuracy import sequence_accuracy
    from compsuite.eval.metrics.consistency import consistency

    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: no such folder of released predictions")
    rows = []
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        model = model_dir.name
        for test in ("pcfgset", "systematicity", "productivity"):
            for f in sorted((model_dir / test).glob("run=*.txt")):
                p = read_tsv(f)
                rows.append({"model": model, "test": "task_accuracy" if test == "pcfgset" else test,
                             "run": _run_number(f), "value": sequence_accuracy(
                                 p.hypotheses, p.references).accuracy, "n": len(p),
                             "files": [str(f)]})
        for cond in ("equally_distributed", "primitive"):
            for f in sorted((model_dir / "substitutivity" / cond).glob("run=*.txt")):
                if f.stem.endswith("_synonym"):
                    continue
                twin = f.with_name(f.stem + "_synonym.txt")
                a, b = read_tsv(f), read_tsv(twin)
                if len(a) != len(b):
                    raise DataError(f"{f} and {twin} differ in length ({len(a)} vs {len(b)})")
                c = consistency(a.hypotheses, b.hypotheses, a.references)
                rows.append({"model": model, "test": f"substitutivity_{cond}",
                             "run": _run_number(f), "value": c.consistency, "n": c.n,
                             "details": c.as_dict(), "files": [str(f), str(twin)]})
        for f in sorted((model_dir / "localism").glob("run=*.txt")):
            blocks = read_localism_log(f)
            whole = [b["original"][1] for b in blocks]
            unrolled = [b["steps"][-1][1] for b in blocks]
            c = consistency(whole, unrolled)
            agree = sum((w.split() == u.split()) == b["flag"]
                        for w, u, b in zip(whole, unrolled, blocks))
            rows.append({"model": model, "test": "localism", "run": _run_number(f),
                         "value": c.consistency, "n": c.n,
                         "flags_true": sum(b["flag"] for b in blocks) / len(blocks),
                         "flags_agree": agree / len(blocks), "files": [str(f)]})
        for f in sorted((model_dir / "overgeneralisation").glob("*ratio=*_run=*.txt")):
            res = read_overgeneralisation_log(f)
            ratio = _RATIO.search(f.name).group(1)
            rows.append({"model": model, "test": f"overgeneralisation@{ratio}",
                         "run": _run_number(f), "value": res["peak_overgeneralisation"],
                         "peak_at": res["peak_at"], "files": [str(f)]})
    if not rows:
        raise DataError(f"{root}: no released prediction files found (expected "
                        "<model>/<test>/run=N.txt)")
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Mean and standard deviation over runs, per model and test."""
    groups: dict = defaultdict(list)
    for r in rows:
        groups[(r["model"], r["test"])].append(r["value"])
    return [{"model": m, "test": t, "mean": st.fmean(v),
             "std": st.stdev(v) if len(v) > 1 else None, "runs": len(v)}
            for (m, t), v in sorted(groups.items())]
