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
it).  ``--openblas-kernels`` (``COMPSUITE_KERNELS=openblas``) keeps the pins and moves
the single-precision matrix products (``sgemm_``, which ``libtorch_cpu.so`` calls through
the dynamic linker) from MKL's slow COMPATIBLE branch to OpenBLAS on its Haswell kernels
(AVX2 and FMA, ``OPENBLAS_CORETYPE=Haswell``), which OpenBLAS runs alike on every vendor's
CPU that has those instructions: about twice MKL's COMPATIBLE speed in a Transformer's
training step.  The OpenBLAS is the pinned ``scipy-openblas32`` wheel, whose symbols are
prefixed; ``compsuite/sgemm_openblas.c``, built by ``scripts/setup_env.sh``, gives it the
unprefixed ``sgemm_``.  That library is preloaded into every process the suite starts
(``LD_PRELOAD``) and loaded into this one before torch (global symbols, so torch's calls
reach it: the same numbers as a preload).  A GPU's arithmetic is not affected.
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
#: ``pinned`` (the default), ``openblas`` or ``machine``: what :func:`setup` did, for
#: the processes started from this one
STATE = "COMPSUITE_KERNELS"
OPTION = "--machine-kernels"
OPENBLAS_OPTION = "--openblas-kernels"
#: with ``--openblas-kernels``, besides :data:`PINNED`: OpenBLAS's kernels whatever the
#: CPU, and its threads waiting without spinning beside torch's own (two pools that both
#: spin halve a two-thread training's speed: docs/reproducibility.md)
OPENBLAS = {"OPENBLAS_CORETYPE": "Haswell", "OMP_WAIT_POLICY": "PASSIVE"}
#: the library that gives OpenBLAS an unprefixed ``sgemm_``, as scripts/setup_env.sh
#: builds it in the environment
SHIM = "lib/compsuite-blas/libsgemm_openblas.so"


def shim_path() -> str:
    """The ``sgemm_`` library: ``COMPSUITE_OPENBLAS_SHIM`` where set, else where
    scripts/setup_env.sh puts it (in this environment)."""
    return os.environ.get("COMPSUITE_OPENBLAS_SHIM") or os.path.join(sys.prefix, SHIM)


def setup(argv: list[str] | None = None) -> bool:
    """Pin the kernels (set :data:`PINNED` in this process's environment) unless
    ``argv`` has ``--machine-kernels`` or ``COMPSUITE_KERNELS=machine``; returns whether
    they are pinned.  With ``--openblas-kernels`` or ``COMPSUITE_KERNELS=openblas``, also
    OpenBLAS's matrix products (:func:`use_openblas`).  To be called before torch is
    imported (a later call still reaches the processes started afterwards; it says so on
    stderr).  Another value of ``COMPSUITE_KERNELS``, both options, or
    ``--openblas-kernels`` where setup_env.sh built no OpenBLAS library, is a ValueError
    (not silently pinned otherwise)."""
    argv = argv or []
    state = os.environ.get(STATE, "")
    if state not in ("", "pinned", "machine", "openblas"):
        raise ValueError(f"{STATE}={state}: expected pinned (the default), openblas or "
                         "machine")
    if OPTION in argv and OPENBLAS_OPTION in argv:
        raise ValueError(f"{OPTION} and {OPENBLAS_OPTION}: give one of them")
    machine = OPTION in argv or (state == "machine" and OPENBLAS_OPTION not in argv)
    if machine:
        os.environ[STATE] = "machine"
        return False
    if "torch" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED.items()):
        print("compsuite: note: torch was imported before the kernels were pinned; this "
              "process keeps the kernels it chose", file=sys.stderr)
    os.environ.update(PINNED)
    if OPENBLAS_OPTION in argv or state == "openblas":
        use_openblas()
    else:
        os.environ[STATE] = "pinned"
    return True


def use_openblas() -> None:
    """OpenBLAS's ``sgemm_`` in this process (loaded before torch, its symbols global)
    and in every process started from it (``LD_PRELOAD``), on :data:`OPENBLAS`'s
    settings.  A ValueError names the missing library and how to build it."""
    shim = shim_path()
    if not os.path.isfile(shim):
        raise ValueError(f"{OPENBLAS_OPTION}: no OpenBLAS library at {shim}; "
                         "scripts/setup_env.sh builds it (it needs a C compiler, cc)")
    os.environ.update(OPENBLAS)
    os.environ[STATE] = "openblas"
    preload = os.environ.get("LD_PRELOAD", "").split()
    if shim not in preload:
        os.environ["LD_PRELOAD"] = " ".join([shim, *preload])
    # OpenBLAS splits a product between its threads, which changes its sums: one thread
    # unless told (a run sets its own: set_threads, and its children's: thread_env)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "torch" in sys.modules:
        print("compsuite: note: torch was imported before OpenBLAS was loaded; this "
              "process keeps MKL's matrix products, the processes it starts use OpenBLAS's",
              file=sys.stderr)
        return
    import ctypes

    global _openblas
    _openblas = ctypes.CDLL(shim, mode=ctypes.RTLD_GLOBAL)


#: the OpenBLAS library loaded into this process (:func:`use_openblas`), or None
_openblas = None


def set_threads(threads: int) -> None:
    """This process's CPU threads for torch, and for OpenBLAS where it does the matrix
    products (its own thread pool, which torch's setting does not reach)."""
    import torch

    torch.set_num_threads(threads)
    if os.environ.get(STATE) != "openblas":
        return
    global _openblas
    if _openblas is None:   # preloaded by the process that started this one (a Slurm job)
        import ctypes

        _openblas = ctypes.CDLL(shim_path())
    _openblas.scipy_openblas_set_num_threads(threads)


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
    out = {"pinned": os.environ.get(STATE) != "machine" and all(
               os.environ.get(k) == v for k, v in PINNED.items()),
           "torch_cpu_capability": capability, "cpu": cpu_model()}
    if os.environ.get(STATE) == "openblas":   # only then: earlier results stay comparable
        out["matrix_products"] = openblas_version()
    return out


def openblas_version() -> str:
    """What does the matrix products with ``--openblas-kernels``: the wheel's version
    and the core type, e.g. ``OpenBLAS (scipy-openblas32 0.3.34.481.3), Haswell``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        wheel = f"scipy-openblas32 {version('scipy-openblas32')}"
    except PackageNotFoundError:
        wheel = "scipy-openblas32 not installed"
    return f"OpenBLAS ({wheel}), {os.environ.get('OPENBLAS_CORETYPE')}"
