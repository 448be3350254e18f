"""Where a training step of the hf backend goes, on SGET's quick Llama stand-in: the
suite's ``transformers.Trainer`` against a bare PyTorch loop over the same batches, and
two ways to a cheaper step that would change the training (so the suite does not take
them): batches grouped by length, and the kernels the machine chooses.

    .venv/bin/python benchmarks/bench_hf_training.py DATA/sget/main/scale0.2/seed1/plain \\
        [--rounds 3] [--steps 30] [--threads 1]

The folder holds the quick profile's plain text (``train.src``, ``train.tgt``; written by
``compsuite run sget --profile quick``).  The stand-in is built from it as the suite
builds it (``runs.llama2-hf.profiles.quick`` of sget.yaml: its config, a byte-level BPE
tokenizer trained on the training text, seed 0) into a temporary folder.  The ways, each
a process of its own, in alternating rounds:

* ``trainer``: the suite's training (its ``TrainingArguments``, examples and padding;
  batch 32, AdamW, a step logged every update), kernels pinned as the suite pins them;
* ``bare``: the same model and batches (the Trainer's own data loader), AdamW, the
  gradient clipped at 1.0 as the Trainer clips it, no Trainer (and no learning-rate
  schedule: it changes the numbers, not the work);
* ``grouped``: the suite's training with the Trainer's length-grouped sampler
  (``train_sampling_strategy: group_by_length``): other batches, another training;
* ``machine``: the suite's training with the kernels torch and MKL choose for this CPU
  (``--machine-kernels``): other sums.

A step is everything from one update's end to the next (the batch's loading and
padding, forward, backward, optimiser, logging), after two steps of warm-up.  Prints per
way the median CPU seconds per step (process time: on a shared machine it moves less
than wall time; with more than one thread it counts every thread's, waiting included),
the wall seconds per step, and the tokens of a batch, padded and real; then the ratios
to ``trainer``.  Nothing is compared with a threshold: it measures.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAYS = ("trainer", "bare", "grouped", "machine")
#: steps before the clock starts
WARM = 2


def stand_in(plain: Path, root: Path) -> tuple[Path, dict]:
    """The quick stand-in built on ``plain``'s training text under ``root``, and the
    quick profile's settings of the run (as a mapping)."""
    from dataclasses import asdict

    from compsuite.foundation.dataset import Dataset
    from compsuite.registry import get_study
    from compsuite.toolkits.hf.backend import build, settings

    s = settings(get_study("sget").run("llama2-hf"), "quick")
    folder = build(Dataset(root, ("train",), text=plain), s.build, s.prompt, show=False)
    return folder, asdict(s)


def worker(way: str, plain: Path, base: Path, given: dict, steps: int, threads: int) -> dict:
    """Train ``steps`` + :data:`WARM` steps the ``way`` says; the clock of each step."""
    import torch
    from transformers import Trainer, TrainerCallback

    from compsuite.foundation.io import read_lines
    from compsuite.schema import check
    from compsuite.toolkits.hf.backend import Settings
    from compsuite.toolkits.hf.train import Examples, collate, load_base, training_arguments

    torch.set_num_threads(threads)
    s = check(Settings, {**given, "model": str(base), "build": None, "epochs": 1,
                         "max_steps": steps + WARM, "save_steps": 10 ** 6}, "benchmark")
    torch.manual_seed(1)
    model, tok = load_base(str(base), s, cuda=False)
    data = Examples(tok, read_lines(plain / "train.src"), read_lines(plain / "train.tgt"), s)
    pad, sizes, clock = collate(tok.pad_token_id), [], []

    def counted(batch):
        out = pad(batch)
        sizes.append((out["input_ids"].numel(), int(out["attention_mask"].sum())))
        return out

    def tick():
        clock.append((time.process_time(), time.perf_counter()))

    class Clock(TrainerCallback):
        def on_step_end(self, *args, **kwargs):
            tick()

    with tempfile.TemporaryDirectory() as out:
        args = training_arguments({"out": out, "seed": 1, "cuda": False}, s)
        if way == "grouped":
            args.train_sampling_strategy = "group_by_length"
        trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=counted,
                          callbacks=[Clock()])
        if way == "bare":
            optimiser = torch.optim.AdamW(model.parameters(), lr=s.learning_rate,
                                          weight_decay=s.weight_decay)
            model.train()
            batches = iter(trainer.get_train_dataloader())
            for _ in range(steps + WARM):
                model(**next(batches)).loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimiser.step()
                optimiser.zero_grad()
                tick()
        else:
            trainer.train()
    cpu = [b[0] - a[0] for a, b in zip(clock[WARM - 1:], clock[WARM:])]
    wall = [b[1] - a[1] for a, b in zip(clock[WARM - 1:], clock[WARM:])]
    kept = sizes[WARM:steps + WARM]
    return {"cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall),
            "padded": sum(p for p, _ in kept) / len(kept),
            "real": sum(r for _, r in kept) / len(kept),
            "capability": torch.backends.cpu.get_cpu_capability()}


def measure(way: str, a, base: Path, given: dict) -> dict:
    from compsuite import kernels

    env = {k: v for k, v in os.environ.items() if k not in (*kernels.PINNED, kernels.STATE)}
    env.update({} if way == "machine" else kernels.PINNED)
    env.update({"OMP_NUM_THREADS": str(a.threads), "MKL_NUM_THREADS": str(a.threads),
                "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])})
    out = subprocess.run([sys.executable, __file__, str(a.plain), "--worker", way,
                          "--base", str(base), "--settings", json.dumps(given),
                          "--steps", str(a.steps), "--threads", str(a.threads)],
                         env=env, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{way}: the worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("plain", type=Path, help="the quick profile's plain text folder")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--worker", choices=WAYS, help=argparse.SUPPRESS)
    p.add_argument("--base", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--settings", help=argparse.SUPPRESS)
    a = p.parse_args()
    sys.path.insert(0, str(ROOT))
    if a.worker:
        print(json.dumps(worker(a.worker, a.plain, a.base, json.loads(a.settings), a.steps,
                                a.threads)))
        return
    if not (a.plain / "train.src").is_file() or not (a.plain / "train.tgt").is_file():
        sys.exit(f"{a.plain}: no train.src and train.tgt (the quick profile's plain text: "
                 "DATA/sget/main/scale0.2/seed1/plain)")
    from compsuite.kernels import cpu_model

    with tempfile.TemporaryDirectory() as tmp:
        base, given = stand_in(a.plain, Path(tmp))
        runs: dict[str, list[dict]] = {way: [] for way in WAYS}
        for _ in range(a.rounds):
            for way in WAYS:
                runs[way].append(measure(way, a, base, given))
    print(f"CPU: {cpu_model()}; {a.threads} thread(s), {a.rounds} rounds of {a.steps} steps "
          f"after {WARM}; pinned kernels: {runs['trainer'][0]['capability']}, the "
          f"machine's: {runs['machine'][0]['capability']}")
    print("| way | CPU s / step | wall s / step | tokens / batch, padded | real | "
          "CPU time / trainer's |")
    print("| --- | --- | --- | --- | --- | --- |")
    med = {way: {k: statistics.median(r[k] for r in runs[way])
                 for k in ("cpu_s", "wall_s", "padded", "real")} for way in WAYS}
    for way in WAYS:
        m = med[way]
        print(f"| {way} | {m['cpu_s']:.3f} | {m['wall_s']:.3f} | {m['padded']:.0f} | "
              f"{m['real']:.0f} | {m['cpu_s'] / med['trainer']['cpu_s']:.2f} |")


if __name__ == "__main__":
    main()
