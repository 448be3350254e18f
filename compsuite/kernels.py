"""The CPU kernels every process of a run uses, pinned so that a result does not depend
on the x86 CPU it was computed on.

torch, oneDNN and MKL each choose their kernels by the instruction sets the CPU has: the
same training gives other numbers on a machine with AVX-512 than on one with AVX2 only
(summation order, fused operations), and MKL chooses by the CPU's vendor as well.
:func:`setup` pins all three before torch is imported, in the environment that every
toolkit process the suite starts inherits:

* ``ATEN_CPU_CAPABILITY=avx2``: torch's own vectorised kernels, at AVX2, which every x86
  CPU of the last decade has;
* ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's (torch's mkldnn operators: the LSTMs), at AVX2;
* ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility, on its
  COMPATIBLE branch (SSE2), the one branch MKL honours on every vendor's CPU: on an AMD
  CPU it ignores ``MKL_CBWR=AVX2`` (``MKL_VERBOSE=1`` shows ``CNR:AUTO``) and runs its
  own choice of kernel, so every matrix product (the Transformers' linear layers and
  attention) was summed otherwise than on an Intel CPU.

On by default; ``--machine-kernels`` (or ``COMPSUITE_KERNELS=machine``) lets each
library choose for the CPU it finds, faster (``benchmarks/bench_kernels.py`` measures
it).  A GPU's arithmetic is not affected.
Each result records what was in force (:func:`describe`).  What cannot be pinned this
way, and what differs without it, is written in ``docs/reproducibility.md``.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache

#: the variables set, and their values
PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
          "MKL_CBWR": "COMPATIBLE"}
#: ``pinned`` (the default) or ``machine``: what :func:`setup` did, for the processes
#: started from this one
STATE = "COMPSUITE_KERNELS"
OPTION = "--machine-kernels"


def setup(argv: list[str] | None = None) -> bool:
    """Pin the kernels (set :data:`PINNED` in this process's environment) unless
    ``argv`` has ``--machine-kernels`` or ``COMPSUITE_KERNELS=machine``; returns whether
    they are pinned.  To be called before torch is imported (a later call still
    reaches the processes started afterwards; it says so on stderr).  Another value of
    ``COMPSUITE_KERNELS`` is a ValueError (not silently pinned)."""
    state = os.environ.get(STATE, "")
    if state not in ("", "pinned", "machine"):
        raise ValueError(f"{STATE}={state}: expected pinned (the default) or machine")
    machine = state == "machine" or OPTION in (argv or [])
    if machine:
        os.environ[STATE] = "machine"
        return False
    if "torch" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED.items()):
        print("compsuite: note: torch was imported before the kernels were pinned; this "
              "process keeps the kernels it chose", file=sys.stderr)
    os.environ.update(PINNED)
    os.environ[STATE] = "pinned"
    return True


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def describe() -> dict:
    """What a result records: whether the kernels were pinned, the instruction set
    torch's kernels use in this process, and the CPU."""
    capability = None
    try:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError, RuntimeError):
        pass
    return {"pinned": os.environ.get(STATE) != "machine" and all(
                os.environ.get(k) == v for k, v in PINNED.items()),
            "torch_cpu_capability": capability, "cpu": cpu_model()}
