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

On by default, with the single-precision matrix products (``sgemm_``, which
``libtorch_cpu.so`` calls through the dynamic linker: the Transformers' linear layers and
attention) moved from MKL's slow COMPATIBLE branch to OpenBLAS on its Haswell kernels
(AVX2 and FMA, ``OPENBLAS_CORETYPE=Haswell``).  OpenBLAS runs those kernels, with blocking
fixed when it was compiled, alike on every CPU that has the instructions: the same sums
on every vendor's CPU at a given thread count, at about twice MKL's COMPATIBLE speed in
a Transformer's training step.  The OpenBLAS is the pinned ``scipy-openblas32`` wheel,
whose symbols are prefixed; ``compsuite/sgemm_openblas.c``, built by
``scripts/setup_env.sh``, gives it the unprefixed ``sgemm_``.  That library is preloaded
into every process the suite starts (``LD_PRELOAD``) and loaded into this one before
torch (global symbols, so torch's calls reach it: the same numbers as a preload), and the
core OpenBLAS reports running is checked.  Where that library is missing (no C compiler
when the environment was set up) or the CPU lacks AVX2 or FMA, MKL's COMPATIBLE branch
does the products, with a note: other numbers.

``--mkl-kernels`` (``COMPSUITE_KERNELS=mkl``) keeps MKL's COMPATIBLE branch for the
products (the default before issue 52; what the study docs' earlier quick numbers were
measured with); ``--openblas-kernels`` insists on OpenBLAS (an error where it cannot
run); ``--machine-kernels`` (``COMPSUITE_KERNELS=machine``) lets each library choose for
the CPU it finds, faster (``benchmarks/bench_kernels.py`` measures it), and the numbers
then depend on the machine.  A GPU's arithmetic is not affected.  Each result records
what was in force (:func:`describe`).  What cannot be pinned this way, and what differs
without it, is written in ``docs/reproducibility.md``.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache

#: the variables set, and their values
PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
          "MKL_CBWR": "COMPATIBLE"}
#: ``openblas``, ``mkl`` or ``machine``: what :func:`setup` did, for the processes
#: started from this one (``pinned``, this variable's value before OpenBLAS became the
#: default, is read as the default)
STATE = "COMPSUITE_KERNELS"
OPTION = "--machine-kernels"
OPENBLAS_OPTION = "--openblas-kernels"
MKL_OPTION = "--mkl-kernels"
#: the options, and the state each sets
OPTIONS = {OPENBLAS_OPTION: "openblas", MKL_OPTION: "mkl", OPTION: "machine"}
#: the core OpenBLAS must report running (a core name it does not know would make it
#: choose one for the CPU, silently)
CORE = "Haswell"
#: with OpenBLAS, besides :data:`PINNED`: OpenBLAS's kernels whatever the
#: CPU, and its threads waiting without spinning beside torch's own (two pools that both
#: spin halve a two-thread training's speed: docs/reproducibility.md)
OPENBLAS = {"OPENBLAS_CORETYPE": CORE, "OMP_WAIT_POLICY": "PASSIVE"}
#: the library that gives OpenBLAS an unprefixed ``sgemm_``, as scripts/setup_env.sh
#: builds it in the environment
SHIM = "lib/compsuite-blas/libsgemm_openblas.so"


def shim_path() -> str:
    """The ``sgemm_`` library: ``COMPSUITE_OPENBLAS_SHIM`` where set, else where
    scripts/setup_env.sh puts it (in this environment)."""
    return os.environ.get("COMPSUITE_OPENBLAS_SHIM") or os.path.join(sys.prefix, SHIM)


def openblas_missing() -> str | None:
    """Why OpenBLAS cannot do the products here (the library not built, a CPU without
    AVX2 or FMA, which its Haswell kernels execute), or None."""
    shim = shim_path()
    if not os.path.isfile(shim):
        return (f"no OpenBLAS library at {shim}; scripts/setup_env.sh builds it (it needs "
                "a C compiler, cc)")
    flags = cpu_flags()
    if flags is not None and not {"avx2", "fma"} <= flags:
        return f"this CPU ({cpu_model()}) lacks AVX2 or FMA, which OpenBLAS's {CORE} kernels need"
    return None


def setup(argv: list[str] | None = None) -> bool:
    """Pin the kernels (set :data:`PINNED` in this process's environment, and OpenBLAS
    for the matrix products: :func:`use_openblas`) unless ``argv`` has
    ``--machine-kernels`` or ``COMPSUITE_KERNELS=machine``; returns whether they are
    pinned.  ``--mkl-kernels`` (``COMPSUITE_KERNELS=mkl``) leaves the products to MKL's
    COMPATIBLE branch, as the default does, with a note on stderr, where OpenBLAS cannot
    run (:func:`openblas_missing`).  To be called before torch is imported (a later call
    still reaches the processes started afterwards; it says so on stderr).  Another
    value of ``COMPSUITE_KERNELS``, two of the options, or ``--openblas-kernels`` where
    OpenBLAS cannot run, is a ValueError (never silently other kernels)."""
    argv = argv or []
    state = os.environ.get(STATE, "")
    if state not in ("", "pinned", *OPTIONS.values()):
        raise ValueError(f"{STATE}={state}: expected openblas (the default), mkl or machine")
    given = [o for o in OPTIONS if o in argv]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)}: give one of them")
    mode = OPTIONS[given[0]] if given else (state if state != "pinned" else "")
    if mode == "machine":
        os.environ[STATE] = "machine"
        return False
    if "torch" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED.items()):
        print("compsuite: note: torch was imported before the kernels were pinned; this "
              "process keeps the kernels it chose", file=sys.stderr)
    os.environ.update(PINNED)
    if not mode:
        missing = openblas_missing()
        mode = "mkl" if missing else "openblas"
        if missing:
            print(f"compsuite: note: {missing}: MKL's COMPATIBLE branch does the matrix "
                  f"products, whose sums differ from the default's ({MKL_OPTION} chooses it "
                  "without this note)", file=sys.stderr)
    if mode == "openblas":
        use_openblas()
    else:
        os.environ[STATE] = "mkl"
    return True


def use_openblas() -> None:
    """OpenBLAS's ``sgemm_`` in this process (loaded before torch, its symbols global,
    its core checked) and in every process started from it (``LD_PRELOAD``), on
    :data:`OPENBLAS`'s settings.  A ValueError says why it cannot run here."""
    missing = openblas_missing()
    if missing:
        raise ValueError(f"{OPENBLAS_OPTION}: {missing}")
    shim = shim_path()
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
    core = openblas_core()
    if core.lower() != CORE.lower():
        raise ValueError(f"OpenBLAS at {shim} runs its {core} kernels, "
                         f"not {CORE} (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')})")


#: the OpenBLAS library loaded into this process (:func:`use_openblas`), or None
_openblas = None


def set_threads(threads: int) -> None:
    """This process's CPU threads for torch, and for OpenBLAS where it does the matrix
    products (its own thread pool, which torch's setting does not reach)."""
    import torch

    torch.set_num_threads(threads)
    lib = _library()
    if lib is not None:
        lib.scipy_openblas_set_num_threads(threads)


def _library():
    """The OpenBLAS library this process computes with (loaded by :func:`use_openblas`,
    or preloaded by the process that started this one: a Slurm job), or None where
    OpenBLAS does not do the products."""
    global _openblas
    if os.environ.get(STATE) != "openblas":
        return None
    if _openblas is None:
        import ctypes

        _openblas = ctypes.CDLL(shim_path())
    return _openblas


def openblas_core() -> str:
    """The core whose kernels OpenBLAS runs in this process (its own answer, not the
    variable that asked for it)."""
    import ctypes

    lib = _library()
    lib.scipy_openblas_get_corename.restype = ctypes.c_char_p
    return lib.scipy_openblas_get_corename().decode()


@lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields in ``/proc/cpuinfo`` (empty where there is none)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break   # the end of the first processor's block
                key, _, value = line.partition(":")
                out.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return out


def cpu_flags() -> set[str] | None:
    """The CPU's instruction-set flags (``/proc/cpuinfo``), or None where not known."""
    flags = _cpuinfo().get("flags")
    return set(flags.split()) if flags is not None else None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor elsewhere)."""
    model = _cpuinfo().get("model name")
    if model:
        return model
    import platform

    return platform.processor() or "unknown"


def describe() -> dict:
    """What a result records: whether the kernels were pinned, the instruction set
    torch's kernels use in this process, the CPU, and what did the matrix products."""
    capability = None
    try:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError, RuntimeError):
        pass
    out = {"pinned": os.environ.get(STATE) != "machine" and all(
               os.environ.get(k) == v for k, v in PINNED.items()),
           "torch_cpu_capability": capability, "cpu": cpu_model()}
    state = os.environ.get(STATE)
    if state == "openblas":
        out["matrix_products"] = openblas_version()
        out["openblas_threads"] = _library().scipy_openblas_get_num_threads()
    elif state == "mkl":
        out["matrix_products"] = f"MKL ({PINNED['MKL_CBWR']})"
    return out


def openblas_version() -> str:
    """What does the matrix products with OpenBLAS: the wheel's version and the core
    OpenBLAS runs, e.g. ``OpenBLAS (scipy-openblas32 0.3.34.481.3), Haswell``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        wheel = f"scipy-openblas32 {version('scipy-openblas32')}"
    except PackageNotFoundError:
        wheel = "scipy-openblas32 not installed"
    return f"OpenBLAS ({wheel}), {openblas_core()}"
