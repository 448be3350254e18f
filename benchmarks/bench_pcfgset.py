"""Throughput of the PCFG SET generator, the interpreter and the accuracy evaluator.

    .venv/bin/python benchmarks/bench_pcfgset.py [--pairs 20000] [--repeat 3]

Prints pairs/s for generation (sampling + interpretation, the full task's config) and
lines/s for `compsuite eval accuracy`'s work (reading aligned files, exact match and
the depth/length/#functions breakdown, which parses every source).  The best of
--repeat runs is reported.  A benchmark, not a test: timings vary with the machine.
"""
from __future__ import annotations

import argparse
import itertools
import random
import tempfile
import time
from pathlib import Path

from compsuite.data_prep.pcfgset import FULL, SMALL
from compsuite.data_prep.pcfgset.generate import sample_pairs
from compsuite.data_prep.pcfgset.grammar import interpret, structure
from compsuite.eval.metrics.accuracy import accuracy_with_breakdown
from compsuite.models.predictions import read_plain


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n = a.pairs
    for name, cfg in (("full", FULL), ("small", SMALL)):
        t = best_of(a.repeat, lambda: list(itertools.islice(sample_pairs(cfg, 1), n)))
        print(f"generator ({name} config): {n / t:,.0f} pairs/s  ({n} pairs in {t:.2f} s)")
    pairs = list(itertools.islice(sample_pairs(FULL, 1), n))
    srcs = [p[0] for p in pairs]
    t = best_of(a.repeat, lambda: [interpret(s) for s in srcs])
    print(f"interpreter: {n / t:,.0f} lines/s")
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "src").write_text("\n".join(srcs) + "\n")
        (d / "ref").write_text("\n".join(p[1] for p in pairs) + "\n")
        hyps = [p[1] if rng.random() < 0.7 else p[1] + " X1" for p in pairs]
        (d / "hyp").write_text("\n".join(hyps) + "\n")

        def evaluate(breakdown: bool):
            preds = read_plain(d / "hyp", d / "ref", d / "src")
            feats = None
            if breakdown:
                rows = [structure(s) for s in preds.sources]
                feats = {k: [r[k] for r in rows] for k in rows[0]}
            return accuracy_with_breakdown(preds.hypotheses, preds.references, feats)

        t = best_of(a.repeat, lambda: evaluate(False))
        print(f"eval accuracy (read + exact match): {n / t:,.0f} lines/s")
        t = best_of(a.repeat, lambda: evaluate(True))
        print(f"eval accuracy with structure breakdown: {n / t:,.0f} lines/s")


if __name__ == "__main__":
    main()
