#!/usr/bin/env python3
"""The validation curve of fairseq-train runs, as a Markdown table.

    scripts/fairseq_curve.py RUN_DIR_OR_TRAIN_LOG [...] [--metric accuracy]
        [--subsets valid,test,test1] [--names A,R] [--every 5000]

Reads the ``| valid on '<subset>' subset | ... | <metric> <value> | ... |
num_updates <n>`` lines fairseq-train writes at each validation (``train.log`` in a
run folder of the suite), and prints one row per number of updates with a column per
run and subset.  A resumed run's log repeats no validation (fairseq validates each
update count once); if it does, the last line wins.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LINE = re.compile(r"valid on '(?P<subset>[^']+)' subset \| (?P<rest>.*)")


def read_curve(log: Path, metric: str) -> dict[int, dict[str, float]]:
    """``{num_updates: {subset: value}}`` of one log."""
    if log.is_dir():
        log = log / "train.log"
    if not log.is_file():
        raise SystemExit(f"fairseq_curve: no log at {log}")
    out: dict[int, dict[str, float]] = {}
    with open(log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = LINE.search(line)
            if not m:
                continue
            fields = dict(f.strip().split(" ", 1) for f in m["rest"].split("|")
                          if len(f.strip().split(" ", 1)) == 2)
            if metric in fields and "num_updates" in fields:
                out.setdefault(int(fields["num_updates"]), {})[m["subset"]] = \
                    float(fields[metric])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", type=Path, help="run folders or train.log files")
    ap.add_argument("--metric", default="accuracy")
    ap.add_argument("--subsets", default=None,
                    help="comma-separated subsets (default: every one logged)")
    ap.add_argument("--names", default=None, help="comma-separated column prefixes")
    ap.add_argument("--every", type=int, default=None,
                    help="only update counts that are multiples of this")
    a = ap.parse_args(argv)
    names = a.names.split(",") if a.names else [str(p) for p in a.logs]
    if len(names) != len(a.logs):
        ap.error("--names needs one name per log")
    curves = [read_curve(p, a.metric) for p in a.logs]
    subsets = a.subsets.split(",") if a.subsets else sorted(
        {s for c in curves for row in c.values() for s in row})
    steps = sorted({n for c in curves for n in c
                    if a.every is None or n % a.every == 0})
    head = ["updates"] + [f"{n} {s}" for n in names for s in subsets]
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join(["---:"] * len(head)) + " |")
    for n in steps:
        cells = [f"{n:,}"] + [f"{c[n][s]:.1f}" if s in c.get(n, {}) else "–"
                              for c in curves for s in subsets]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
