"""What pinning the CPU kernels costs (compsuite/kernels.py): training steps of a small
Transformer and a small LSTM, with the kernels pinned (the suite's default: torch and
oneDNN at AVX2, MKL on its COMPATIBLE branch) against the kernels torch, oneDNN and MKL
choose for this CPU (``--machine-kernels``), and against the pinning before MKL's branch
was COMPATIBLE (all three at AVX2, which MKL honours on Intel CPUs only).

    .venv/bin/python benchmarks/bench_kernels.py [--rounds 5] [--steps 30] [--threads 1]

Each measurement is a process of its own (the kernels are chosen when torch starts),
the two ways in alternating rounds; each process trains both models for ``--steps``
steps (forward, backward, an Adam step; batch 32, sequences of 40) after two steps of
warm-up and prints its steps per second.  Prints the CPU, what torch chose in each way,
each way's median and the ratios of the medians (pinned / machine and pinned / the
AVX2 pinning: below 1 is slower).
Nothing is compared with a threshold: it measures.

``--openblas [LIB]`` adds a fourth way, ``compsuite run --openblas-kernels``: the pinned
kernels with an OpenBLAS preloaded (``LIB``; by default the library
scripts/setup_env.sh builds over the scipy-openblas32 wheel, else any OpenBLAS with an
unprefixed ``sgemm_``, such as a system's ``libblas.so.3`` or ``libopenblas.so.0``), so
that torch's matrix products, which call ``sgemm_`` through the dynamic linker, run in
OpenBLAS, on its Haswell kernels whatever the CPU (``OPENBLAS_CORETYPE=Haswell``) and
with the run's threads.  Each process also prints a checksum of the weights it trained,
so the table says whether a way gave the same weights in every round and which ways
agree.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def worker(steps: int, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    vocab, d, batch, length = 1000, 256, 32, 40
    emb = torch.nn.Embedding(vocab, d)
    models = {
        "transformer": torch.nn.Transformer(d_model=d, nhead=4, num_encoder_layers=2,
                                            num_decoder_layers=2, dim_feedforward=1024,
                                            batch_first=True, dropout=0.1),
        "lstm": torch.nn.LSTM(d, d, num_layers=2, batch_first=True, bidirectional=True),
    }
    out = {"capability": torch.backends.cpu.get_cpu_capability()}
    x = torch.randint(0, vocab, (batch, length))
    for name, model in models.items():
        head = torch.nn.Linear(d * (2 if name == "lstm" else 1), vocab)
        params = [*model.parameters(), *emb.parameters(), *head.parameters()]
        opt = torch.optim.Adam(params, lr=1e-3)

        def step():
            e = emb(x)
            h = model(e, e) if name == "transformer" else model(e)[0]
            loss = torch.nn.functional.cross_entropy(head(h).reshape(-1, vocab), x.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()

        for _ in range(2):
            step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        out[name] = steps / (time.perf_counter() - start)
        out[name + "_weights"] = hashlib.sha256(
            b"".join(t.detach().numpy().tobytes() for t in params)).hexdigest()[:12]
    return out


#: the pinning before MKL's branch was COMPATIBLE
AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}


def measure(way: dict, steps: int, threads: int) -> dict:
    from compsuite import kernels

    env = {k: v for k, v in os.environ.items() if k not in (*kernels.PINNED, kernels.STATE)}
    env.update(way)
    out = subprocess.run([sys.executable, __file__, "--worker", "--steps", str(steps),
                          "--threads", str(threads)], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--openblas", metavar="LIB", nargs="?", const="",
                   help="also with this OpenBLAS preloaded, on its Haswell kernels (no LIB: "
                        "the one --openblas-kernels uses)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.steps, a.threads)))
        return
    sys.path.insert(0, str(ROOT))
    from compsuite.kernels import OPENBLAS, PINNED, cpu_model, shim_path

    ways = {"machine": {}, "pinned": PINNED, "avx2": AVX2}
    if a.openblas is not None:
        a.openblas = a.openblas or shim_path()
        if not Path(a.openblas).is_file():
            p.error(f"--openblas: no file {a.openblas}")
        ways["openblas"] = {**PINNED, **OPENBLAS, "LD_PRELOAD": str(Path(a.openblas).resolve()),
                            "OPENBLAS_NUM_THREADS": str(a.threads)}
    runs = {way: [] for way in ways}
    for _ in range(a.rounds):
        for way, env in ways.items():
            runs[way].append(measure(env, a.steps, a.threads))
    print(f"CPU: {cpu_model()}; {a.threads} thread(s), {a.rounds} rounds of {a.steps} steps")
    print(f"machine kernels: torch uses {runs['machine'][0]['capability']}; pinned: "
          f"{runs['pinned'][0]['capability']}")
    print("| model | machine (steps/s) | pinned (steps/s) | all at AVX2 (steps/s) | "
          "pinned / machine | pinned / all at AVX2 |")
    print("| --- | --- | --- | --- | --- | --- |")
    def medians(name: str, *of: str) -> list[float]:
        return [statistics.median(r[name] for r in runs[way]) for way in of]

    for name in ("transformer", "lstm"):
        m, q, v = medians(name, "machine", "pinned", "avx2")
        print(f"| {name} | {m:.2f} | {q:.2f} | {v:.2f} | {q / m:.2f} | {q / v:.2f} |")
    if a.openblas:
        print("\n| model | OpenBLAS, Haswell kernels (steps/s) | OpenBLAS / pinned | "
              "OpenBLAS / machine |")
        print("| --- | --- | --- | --- |")
        for name in ("transformer", "lstm"):
            m, q, o = medians(name, "machine", "pinned", "openblas")
            print(f"| {name} | {o:.2f} | {o / q:.2f} | {o / m:.2f} |")
    print("\nweights after training (each way: the rounds' checksums):")
    for name in ("transformer", "lstm"):
        for way in ways:
            sums = sorted({r[name + "_weights"] for r in runs[way]})
            print(f"  {name} {way}: {', '.join(sums)}"
                  + (" (the same in every round)" if len(sums) == 1 else " (rounds differ)"))


if __name__ == "__main__":
    main()
