"""Prompted translation against a real server: one request at a time, the concurrent
pool, and a rerun answered from the request cache, as ratios.

    .venv/bin/python benchmarks/bench_prompted.py --sources DATA/sget/.../plain/gen.src \\
        [--n 200] [--concurrency 4] [--shots 0] [--model FOLDER] [--max-tokens 16] \\
        [--server-threads 2] [--json out.json]

It starts ``transformers serve`` on 127.0.0.1 (``--model``: a local model folder; by
default the tests' tiny Llama built from a config, tests/served_server.py), prompts it
with SGET's prompting (compsuite/experiments/sget.yaml, ``toolkit_defaults.served``:
the authors' template) through the ``served`` backend's model, and times three passes
over the same ``--n`` sources:

1. ``--concurrency 1``, an empty request cache: one request at a time;
2. ``--concurrency N``, an empty cache: the bounded pool;
3. the second pass again, over its cache: nothing is sent.

Prints seconds, requests sent, and the ratios (1 / 2: what the pool gains on this
machine and server; 1 / 3: what a resumed or repeated run costs), and checks that the
three passes give the same answers.  The pool's gain depends on the server: a server
that batches concurrent requests (vLLM, TGI, SGLang, ``transformers serve
--continuous-batching`` on a GPU) gains most; ``transformers serve`` on a CPU answers
one request at a time, so there the pool mostly overlaps the client's waiting.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", required=True, help="one English source per line (SGET gen)")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--shots", type=int, default=0,
                    help="demonstrations per prompt (drawn from --train-src/--train-tgt)")
    ap.add_argument("--train", help="with --shots: the folder with train.src and train.tgt")
    ap.add_argument("--model", help="a local model folder to serve (default: a tiny one)")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--json")
    a = ap.parse_args()

    sys.path.insert(0, str(ROOT / "tests"))
    from served_server import Served, build_model

    from compsuite.foundation.dataset import Dataset
    from compsuite.models.prompting import prompt_spec
    from compsuite.registry import read_yaml
    from compsuite.toolkits.served.model import ServedModel

    prompting = read_yaml(ROOT / "compsuite/experiments/sget.yaml")["toolkit_defaults"][
        "served"]["prompting"]
    spec = prompt_spec({**prompting, "max_tokens": a.max_tokens, "shots": a.shots},
                       "bench: prompting")
    sources = Path(a.sources).read_text(encoding="utf-8").splitlines()[: a.n]
    data = None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if a.shots:
            if not a.train:
                ap.error("--shots needs --train (a folder with train.src and train.tgt)")
            (tmp / "data").mkdir()
            (tmp / "data" / "raw").symlink_to(Path(a.train).resolve())
            data = Dataset(tmp / "data")
        folder = Path(a.model) if a.model else build_model(tmp / "model")
        rows, outputs = [], {}
        with Served(folder, tmp / "server.log") as server:
            def one_pass(name: str, concurrency: int, cache: Path) -> None:
                model = ServedModel(server.url, server.model, spec, data=data, folder=cache,
                                    concurrency=concurrency)
                start = time.perf_counter()
                outputs[name] = model.translate(sources)
                wall = time.perf_counter() - start
                model.close()
                usage = json.loads((cache / "usage.json").read_text())
                rows.append({"pass": name, "concurrency": concurrency, "seconds": wall,
                             "sent": usage["requests_sent"], "cached": usage["requests_cached"]})

            one_pass("one at a time", 1, tmp / "one")
            one_pass("pool", a.concurrency, tmp / "pool")
            (tmp / "pool" / "usage.json").unlink()   # the rerun's own counts
            one_pass("rerun from the cache", a.concurrency, tmp / "pool")
    base = rows[0]["seconds"]
    for r in rows:
        r["ratio"] = base / r["seconds"]
    same = all(outputs[k] == outputs["one at a time"] for k in outputs)
    print(f"{len(sources)} sources, max_tokens {a.max_tokens}, {a.shots}-shot; "
          f"model {'tiny (built from a config)' if not a.model else a.model}")
    print(f"{'pass':24} {'conc.':>5} {'seconds':>8} {'sent':>5} {'cached':>6} {'x one':>7}")
    for r in rows:
        print(f"{r['pass']:24} {r['concurrency']:>5} {r['seconds']:>8.2f} {r['sent']:>5} "
              f"{r['cached']:>6} {r['ratio']:>7.1f}")
    print(f"same answers in all three passes: {same}")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "same": same, "n": len(sources),
                                            "max_tokens": a.max_tokens, "shots": a.shots},
                                           indent=2))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
