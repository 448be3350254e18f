#!/usr/bin/env python3
"""Which operation makes a trained fairseq model's numbers depend on the CPU kernels:
every module's output for one batch, and every parameter's gradient, under several
kernel settings, compared with the suite's pinning.

    .venv/bin/python scripts/kernel_layers.py CHECKPOINT [--data BIN] [--batch 64]

CHECKPOINT is a ``checkpoint_*.pt`` of a run folder (``runs/.../checkpoints/``);
``--data`` the fairseq-binarised folder it was trained on (default: the one its
configuration names, relative to the current folder).  Each setting is a process of its
own (the libraries choose their kernels when they start), which loads the model, runs
the first ``--batch`` validation examples through it in evaluation mode with a hook on
every module, and back-propagates the summed loss.  The settings:

* ``pinned``: the suite's pinning (compsuite/kernels.py), what the others are compared with;
* ``mkl-avx2``: MKL on its AVX2 branch (the pinning before COMPATIBLE);
* ``mkl-auto``: MKL choosing for this CPU (``MKL_CBWR=AUTO``);
* ``onednn-sse41``: oneDNN capped at SSE4.1 instead of AVX2;
* ``torch-default``: torch's own kernels without vector instructions;
* ``machine``: no pinning at all.

For each it prints the first module, in the order they ran, whose output differs from
the pinned one (and by how much), how many modules' outputs and parameters' gradients
differ, and the largest difference in the model's output.  ``mkl-avx2`` equal to
``mkl-auto`` means MKL ignored its AVX2 branch on this CPU.  With ``MKL_VERBOSE=1``
MKL itself names the branch it ran (``CNR:...``).  Nothing is compared with a threshold.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compsuite.kernels import PINNED, STATE  # noqa: E402

SETTINGS = {
    "pinned": PINNED,
    "mkl-avx2": {**PINNED, "MKL_CBWR": "AVX2"},
    "mkl-auto": {**PINNED, "MKL_CBWR": "AUTO"},
    "onednn-sse41": {**PINNED, "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "torch-default": {**PINNED, "ATEN_CPU_CAPABILITY": "default"},
    "machine": {},
}


def first_tensor(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (tuple, list)):
        for y in x:
            t = first_tensor(y)
            if t is not None:
                return t
    if isinstance(x, dict):
        return first_tensor(list(x.values()))
    return None


def worker(checkpoint: str, data: str | None, batch: int, out: str) -> None:
    """Run one batch through the model in this process's kernels; save what it saw."""
    import torch
    from fairseq import checkpoint_utils, utils

    torch.set_num_threads(1)
    utils.import_user_module(argparse.Namespace(user_dir=str(ROOT / "fairseq_plugins")))
    overrides = {"data": data} if data else {}
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [checkpoint], arg_overrides=overrides)
    model = models[0].eval()
    task.load_dataset(cfg.dataset.valid_subset.split(",")[0])
    ds = task.dataset(cfg.dataset.valid_subset.split(",")[0])
    sample = ds.collater([ds[i] for i in range(min(batch, len(ds)))])
    seen: dict[str, torch.Tensor] = {}

    def hook(name):
        def record(_module, _inputs, output):
            t = first_tensor(output)
            if t is not None and t.is_floating_point():
                seen.setdefault(f"{len(seen):03d} {name or '(model)'}", t.detach().clone())
        return record

    for name, module in model.named_modules():
        module.register_forward_hook(hook(name))
    criterion = task.build_criterion(cfg.criterion)
    loss, _, _ = criterion(model, sample)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()
             if p.grad is not None}
    torch.save({"outputs": seen, "grads": grads}, out)


def run(setting: dict, args, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*PINNED, STATE)}
    env.update(setting)
    env[STATE] = "mkl" if setting == PINNED else "machine"
    cmd = [sys.executable, __file__, args.checkpoint, "--batch", str(args.batch),
           "--worker", str(out)] + (["--data", args.data] if args.data else [])
    subprocess.run(cmd, env=env, check=True)


def compare(base: dict, other: dict) -> dict:
    outputs = [(k, (base["outputs"][k] - other["outputs"][k]).abs().max().item())
               for k in base["outputs"] if k in other["outputs"]
               and base["outputs"][k].shape == other["outputs"][k].shape]
    differ = [(k, d) for k, d in outputs if d > 0]
    grads = sum(1 for k, g in base["grads"].items() if not bool((g == other["grads"][k]).all()))
    last = outputs[-1][1] if outputs else float("nan")
    return {"first": differ[0] if differ else None, "modules": len(differ),
            "of": len(outputs), "grads": grads, "of_grads": len(base["grads"]),
            "model_output": max((d for k, d in outputs if k.endswith("(model)")),
                                default=last)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--data")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(a.checkpoint, a.data, a.batch, a.worker)
        return
    import torch

    from compsuite.kernels import cpu_model

    with tempfile.TemporaryDirectory() as tmp:
        saved = {}
        for name, setting in SETTINGS.items():
            run(setting, a, Path(tmp) / f"{name}.pt")
            saved[name] = torch.load(Path(tmp) / f"{name}.pt")
    print(f"CPU: {cpu_model()}; {a.checkpoint}; one batch of {a.batch}")
    print("| setting | first module that differs from pinned (max abs difference) | "
          "modules differing | gradients differing | model output: max abs difference |")
    print("| --- | --- | --- | --- | --- |")
    for name in SETTINGS:
        if name == "pinned":
            continue
        c = compare(saved["pinned"], saved[name])
        first = f"`{c['first'][0][4:]}` ({c['first'][1]:.1e})" if c["first"] else "none"
        print(f"| {name} | {first} | {c['modules']} of {c['of']} | {c['grads']} of "
              f"{c['of_grads']} | {c['model_output']:.1e} |")
    same = compare(saved["mkl-avx2"], saved["mkl-auto"])
    print(f"mkl-avx2 against mkl-auto: {same['modules']} of {same['of']} modules and "
          f"{same['grads']} of {same['of_grads']} gradients differ"
          + (" (MKL ignored its AVX2 branch on this CPU)" if not same["modules"]
             and not same["grads"] else ""))


if __name__ == "__main__":
    main()
