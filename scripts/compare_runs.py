#!/usr/bin/env python3
"""Compare the stored results of two run folders value by value.

    python scripts/compare_runs.py RUNS_A RUNS_B [--study S --profile P]
        [--ignore-paths] [--ignore KEY ...] [--added-ok]

RUNS_A and RUNS_B are ``--runs-root`` folders (or any folders): every ``result.json``
under A is matched by its relative path to the one under B and the two are compared
leaf by leaf.  Provenance that says where or when a result was made (the git
revision, training time, thread count, CPU kernels) is left out by default; ``--ignore-paths``
also leaves out string values that are paths (they name the folder the run lived in,
so two copies of the same run differ there).  Prints every difference and a summary
line; exits 1 when anything differs or a result is missing on one side.

Use it to check that a change keeps results (a refactoring), or that a resumed run
matches an uninterrupted one.  ``--added-ok``: a change that only adds keys (a new
signature beside a number) keeps every value of A; the keys only in B are still listed,
as "added in B", but do not make a result differ.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

#: provenance that depends on when and where a run was made, not on what it computed
VOLATILE = ("git", "train_wall_s", "threads", "wall_s", "created", "elapsed_s", "kernels")


def leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{prefix}[{i}]")
    else:
        yield prefix, obj


def looks_like_path(value: Any) -> bool:
    return isinstance(value, str) and ("/" in value) and not value.startswith("http")


def compare(a: dict, b: dict, ignore: set[str], ignore_paths: bool,
            added_ok: bool = False) -> tuple[list[str], list[str]]:
    """The differences between ``a`` and ``b`` leaf by leaf, and (with ``added_ok``) the
    leaves only in ``b``, which then are not differences."""
    def keep(key: str, value: Any) -> bool:   # no part of the key path is ignored
        parts = {p.split("[", 1)[0] for p in key.split(".")}
        return not parts & ignore and not (ignore_paths and looks_like_path(value))

    la = {k: v for k, v in leaves(a) if keep(k, v)}
    lb = {k: v for k, v in leaves(b) if keep(k, v)}
    out, added = [], []
    for k in sorted(set(la) | set(lb)):
        if k not in lb:
            out.append(f"{k}: only in A ({la[k]!r})")
        elif k not in la:
            (added if added_ok else out).append(
                f"{k}: {'added in B' if added_ok else 'only in B'} ({lb[k]!r})")
        elif la[k] != lb[k]:
            out.append(f"{k}: {la[k]!r} != {lb[k]!r}")
    return out, added


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--ignore", nargs="*", default=[], help="more keys to leave out")
    p.add_argument("--ignore-paths", action="store_true",
                   help="leave out string values that are paths")
    p.add_argument("--added-ok", action="store_true",
                   help="keys only in B (added by the change) are listed, not differences")
    a = p.parse_args(argv)
    ignore = set(VOLATILE) | set(a.ignore)
    files_a = {f.relative_to(a.a): f for f in a.a.rglob("result.json")}
    files_b = {f.relative_to(a.b): f for f in a.b.rglob("result.json")}
    if not files_a and not files_b:
        print(f"compare_runs: no result.json under {a.a} or {a.b}", file=sys.stderr)
        return 2
    bad = values = n_added = 0
    for rel in sorted(set(files_a) | set(files_b)):
        if rel not in files_b or rel not in files_a:
            print(f"{rel}: only in {'A' if rel in files_a else 'B'}")
            bad += 1
            continue
        ra, rb = (json.loads(f[rel].read_text()) for f in (files_a, files_b))
        values += sum(1 for _ in leaves(ra))
        diffs, added = compare(ra, rb, ignore, a.ignore_paths, a.added_ok)
        for d in diffs + added:
            print(f"{rel}: {d}")
        n_added += len(added)
        bad += bool(diffs)
    print(f"compare_runs: {len(set(files_a) | set(files_b))} results, {values:,} values in A; "
          f"{bad} result(s) differ" + (f"; {n_added} value(s) added in B" if a.added_ok else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
