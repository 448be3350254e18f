#!/usr/bin/env python3
"""Do results depend on the x86 CPU's instruction sets?  Each study's tiny profile is run
four times on this machine, into folders of their own over one data folder:

* ``machine``: ``--machine-kernels``, the kernels torch, oneDNN and MKL choose for this
  CPU (AVX-512 on a CPU that has it);
* ``machine-avx2``: ``--machine-kernels`` as on a CPU with AVX2 only (the three
  libraries told so: ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, MKL_CBWR);
* ``pinned`` and ``pinned-avx2``: the suite's default (compsuite/kernels.py), in the
  same two environments.

Then the two ``machine`` runs are compared value by value (scripts/compare_runs.py),
and the two ``pinned`` runs; ``OUT/summary.md`` gets a table of what differs.

    python scripts/kernel_check.py OUT [STUDY ...]     (default: every study)

On one machine the AVX2-only CPU is emulated by those variables; a second machine of
another kind is the real test (run this script there, compare its ``pinned`` folder
with this one's).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from compare_runs import VOLATILE, compare, leaves  # noqa: E402

AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}
CONDITIONS = {"machine": ({}, True), "machine-avx2": (AVX2, True),
              "pinned": ({}, False), "pinned-avx2": (AVX2, False)}
STUDIES = ("pcfgset", "ctlpp", "sget", "paradox", "nli")


def run(study: str, out: Path, name: str) -> float:
    extra, machine = CONDITIONS[name]
    env = {k: v for k, v in os.environ.items()
           if k not in (*AVX2, "COMPSUITE_KERNELS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(extra)
    cmd = [sys.executable, "-m", "compsuite.cli", "run", study, "--profile", "tiny", "--quiet",
           "--data-root", str(out / "DATA"), "--runs-root", str(out / name / "runs"),
           "--results-root", str(out / name / "results")]
    if machine:
        cmd.append("--machine-kernels")
    start = time.time()
    with open(out / f"{study}-{name}.log", "w") as log:
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    return time.time() - start


def differences(a: Path, b: Path) -> tuple[int, int, int, Counter]:
    """(results, values, differing values, differing keys by their first two parts)."""
    ignore = set(VOLATILE) | {"kernels", "checkpoint"}
    results = values = n = 0
    keys: Counter = Counter()
    for fa in sorted(a.rglob("result.json")):
        fb = b / fa.relative_to(a)
        ra, rb = json.loads(fa.read_text()), json.loads(fb.read_text())
        results += 1
        values += sum(1 for _ in leaves(ra))
        for d in compare(ra, rb, ignore, ignore_paths=True):
            n += 1
            path = d.split(":", 1)[0]
            keys[".".join(path.replace("[", ".").split(".")[:2])] += 1
    return results, values, n, keys


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = ["| study | results | values | differ, machine kernels (AVX-512 vs AVX2) | "
            "differ, pinned | where they differ (machine kernels) | minutes (4 runs) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for study in argv[1:] or STUDIES:
        took = sum(run(study, out, name) for name in CONDITIONS)
        runs = {name: out / name / "runs" / study / "tiny" for name in CONDITIONS}
        n_res, n_val, d_machine, keys = differences(runs["machine"], runs["machine-avx2"])
        _, _, d_pinned, _ = differences(runs["pinned"], runs["pinned-avx2"])
        where = ", ".join(f"{k} ({v})" for k, v in keys.most_common(6)) or "none"
        rows.append(f"| {study} | {n_res} | {n_val:,} | {d_machine:,} | {d_pinned:,} | {where} "
                    f"| {took / 60:.1f} |")
        print(rows[-1], flush=True)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    (out / "summary.md").write_text(f"CPU: {cpu}\n\n" + "\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
