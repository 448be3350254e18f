"""Localism driver: batched by level against a one-line-at-a-time loop, on one
checkpoint (fairseq or OpenNMT-py).

    .venv/bin/python benchmarks/bench_localism.py --checkpoint CK [--data FAIRSEQ_BIN] \\
        --unrolled unrolled_test.tsv [--samples 300]

Prints both wall times, the speed ratio, both translate-call counts and how many
samples' outputs agree between the two (greedy decoding can depend on batch
composition in some models, so agreement need not be total).  Without --unrolled,
the test split of the data beside the checkpoint's run is unrolled.
"""
from __future__ import annotations

import argparse
import time

from compsuite.eval.pcfgset import localism
from compsuite.toolkits import load_translator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--data", help="fairseq-bin folder (fairseq checkpoints)")
    ap.add_argument("--unrolled", required=True)
    ap.add_argument("--samples", type=int, default=300)
    a = ap.parse_args()
    samples = localism.read_unrolled(a.unrolled)[: a.samples]
    results = {}
    for name, fn in (("batched by level", localism.run),
                     ("one line at a time", localism.run_unbatched)):
        tr = load_translator(a.checkpoint, a.data)
        t = time.perf_counter()
        res = fn(tr, samples)
        results[name] = (time.perf_counter() - t, tr.calls, tr.batches, res)
    (tb, cb, bb, rb), (tu, cu, bu, ru) = results.values()
    agree = sum(x["output_unrolled"] == y["output_unrolled"]
                for x, y in zip(rb["traces"], ru["traces"]))
    print(f"samples: {len(samples)}, unrolled lines: {sum(len(s.steps) for s in samples)}")
    for name, (t, c, b, r) in results.items():
        print(f"{name:>20}: {t:7.2f} s, {c:5d} translate calls, {b:5d} batches, "
              f"consistency {r['consistency']['consistency']:.3f}")
    print(f"speed ratio: {tu / tb:.1f}x; unrolled outputs identical for {agree}/{len(samples)}")


if __name__ == "__main__":
    main()
