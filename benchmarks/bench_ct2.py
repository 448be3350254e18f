"""Decoding throughput: a toolkit's own decoding against CTranslate2 float32 and int8,
on one checkpoint (fairseq or OpenNMT-py Transformer), one thread, greedy unless --beam.

    .venv/bin/python benchmarks/bench_ct2.py --checkpoint CK [--data FAIRSEQ_BIN] \\
        --sources test.src [--n 2000] [--rounds 3] [--batch-size 64] [--max-length 200] \\
        [--json out.json]

Each round runs the three engines one after the other (alternating, so that a slower
machine moment falls on all three); the conversion happens before the first round (it
is cached beside the checkpoint, as in the suite).  Prints sentences per second (the
median over rounds), the ratio to the toolkit, and the share of lines identical to the
toolkit's (float32 must be 100%: the suite relies on it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from compsuite.toolkits import load_translator

ENGINES = {"toolkit": {}, "ctranslate2 float32": {"engine": "ctranslate2"},
           "ctranslate2 int8": {"engine": "ctranslate2", "compute_type": "int8"}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--data", help="fairseq-bin folder (fairseq checkpoints)")
    ap.add_argument("--sources", required=True, help="one source per line")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=200)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    with open(a.sources, encoding="utf-8") as fh:
        sources = [line.rstrip("\n") for line in fh][: a.n]
    settings = dict(batch_size=a.batch_size, max_length=a.max_length, beam=a.beam)
    models = {name: load_translator(a.checkpoint, a.data, **settings, **extra)
              for name, extra in ENGINES.items()}
    times: dict[str, list[float]] = {name: [] for name in models}
    outputs: dict[str, list[str]] = {}
    for _ in range(a.rounds):
        for name, model in models.items():
            start = time.perf_counter()
            outputs[name] = model.translate(sources)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["toolkit"])
    rows = []
    for name, model in models.items():
        t = statistics.median(times[name])
        same = sum(x == y for x, y in zip(outputs[name], outputs["toolkit"]))
        rows.append({"engine": name, "model": getattr(model, "name", ""),
                     "sentences_per_s": round(len(sources) / t, 1),
                     "ratio": round(base / t, 2), "identical": same / len(sources),
                     "toolkit_sentences": getattr(model, "toolkit_sentences", None),
                     "seconds": [round(x, 3) for x in times[name]]})
    print(f"{a.checkpoint}: {len(sources)} sentences, batches of {a.batch_size}, beam "
          f"{a.beam}, cap {a.max_length}, 1 thread, median of {a.rounds} alternating rounds")
    print("| engine | sentences/s | ratio | identical to the toolkit |")
    print("| --- | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['engine']} | {r['sentences_per_s']:,} | {r['ratio']}x | "
              f"{100 * r['identical']:.1f}% |")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"checkpoint": a.checkpoint, "n": len(sources), **settings,
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
