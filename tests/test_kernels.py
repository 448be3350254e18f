"""The CPU kernels pinned (compsuite/kernels.py): the environment every process of a run
inherits, the switch that leaves the choice to the libraries, and what a result records.
scripts/kernel_check.py compares whole tiny runs under two instruction sets (too long for
the suite; its figures are in docs/reproducibility.md)."""
import os
import subprocess
import sys

from compsuite import kernels


def torch_chooses(env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; "
                          "print(torch.backends.cpu.get_cpu_capability())"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def clear(monkeypatch) -> None:
    """No kernel variables, and every one of them restored after the test (setenv first:
    monkeypatch restores only what it saw, and setup() sets them)."""
    for k in (*kernels.PINNED, kernels.STATE):
        monkeypatch.setenv(k, "")
        monkeypatch.delenv(k)


def test_setup_pins_the_kernels_for_the_processes_it_starts(monkeypatch):
    clear(monkeypatch)
    assert kernels.setup(["run", "ctlpp", "--mkl-kernels"])
    assert {k: os.environ[k] for k in kernels.PINNED} == kernels.PINNED
    assert os.environ[kernels.STATE] == "mkl" and kernels.describe()["pinned"]
    assert kernels.describe()["matrix_products"] == "MKL (COMPATIBLE)"
    assert torch_chooses(dict(os.environ)) in ("AVX2", "DEFAULT")   # never more than AVX2


def test_the_default_is_openblas_and_mkl_where_it_cannot_run(tmp_path):
    """No option: OpenBLAS where setup_env.sh built its library (and the CPU has AVX2 and
    FMA), else MKL's COMPATIBLE branch with one note naming why; --openblas-kernels there
    is an error instead.  A child inherits what its parent chose, without the note."""
    code = ("import os, sys\nfrom compsuite import kernels\nkernels.setup(sys.argv[1:])\n"
            "print(os.environ[kernels.STATE])\n")
    missing = {**user_env(), "COMPSUITE_OPENBLAS_SHIM": str(tmp_path / "none.so")}
    out = subprocess.run([sys.executable, "-c", code], env=missing, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "mkl"
    assert out.stderr.strip().splitlines() == [
        f"compsuite: note: no OpenBLAS library at {tmp_path / 'none.so'}; scripts/setup_env.sh "
        "builds it (it needs a C compiler, cc): MKL's COMPATIBLE branch does the matrix "
        "products, whose sums differ from the default's (--mkl-kernels chooses it without "
        "this note)"]
    child = subprocess.run([sys.executable, "-c", code], env={**missing, kernels.STATE: "mkl"},
                           capture_output=True, text=True, timeout=120)
    assert child.stdout.strip() == "mkl" and child.stderr == ""
    insist = subprocess.run([sys.executable, "-c", code, "--openblas-kernels"], env=missing,
                            capture_output=True, text=True, timeout=120)
    assert insist.returncode != 0 and "--openblas-kernels: no OpenBLAS library" in insist.stderr
    if os.path.isfile(kernels.shim_path()):
        built = subprocess.run([sys.executable, "-c", code], env=user_env(),
                               capture_output=True, text=True, timeout=120)
        assert built.stdout.strip() == ("openblas" if kernels.openblas_missing() is None
                                        else "mkl"), built.stderr


def test_openblas_must_run_the_core_asked_for():
    """OpenBLAS runs a core it does not know by the CPU's choice, silently: the core it
    reports is checked, and another is an error naming it."""
    import pytest

    if kernels.openblas_missing():
        pytest.skip(kernels.openblas_missing())
    code = ("from compsuite import kernels\nkernels.OPENBLAS['OPENBLAS_CORETYPE'] = 'Haswel'\n"
            "kernels.setup([])\n")
    out = subprocess.run([sys.executable, "-c", code], env=user_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode != 0
    assert "not Haswell (OPENBLAS_CORETYPE=Haswel)" in out.stderr.splitlines()[-1]


def test_machine_kernels_leave_the_choice_to_the_libraries(monkeypatch):
    clear(monkeypatch)
    assert not kernels.setup(["run", "ctlpp", "--machine-kernels"])
    assert not any(k in os.environ for k in kernels.PINNED)
    assert os.environ[kernels.STATE] == "machine" and not kernels.describe()["pinned"]
    assert kernels.setup([]) is False   # a child of such a process keeps the choice
    assert not any(k in os.environ for k in kernels.PINNED)


def test_mkl_runs_the_pinned_branch_on_this_cpu(monkeypatch):
    """MKL honours a branch only on CPUs it counts as compatible with it: on an AMD CPU
    it ignored MKL_CBWR=AVX2 (its verbose log said CNR:AUTO, its own choice), so the
    Transformers' matrix products differed from an Intel CPU's.  The pinned branch must
    be the one MKL reports running, whatever the vendor."""
    import pytest
    import torch

    if not torch.backends.mkl.is_available():
        pytest.skip("this torch is built without MKL")
    clear(monkeypatch)
    kernels.setup(["--mkl-kernels"])
    env = {**os.environ, "MKL_VERBOSE": "1"}
    out = subprocess.run([sys.executable, "-c", "import torch; a = torch.ones(64, 64); "
                          "a @ a; torch.bmm(a[None], a[None])"], env=env, capture_output=True,
                         text=True, check=True).stdout
    calls = [line for line in out.splitlines() if "SGEMM" in line]
    assert calls, out[-2000:]   # torch's matrix products go through MKL
    assert all(f"CNR:{kernels.PINNED['MKL_CBWR']}" in line for line in calls), calls


def test_an_unknown_kernels_setting_is_one_line(tmp_path):
    env = {**os.environ, kernels.STATE: "bogus"}
    out = subprocess.run([sys.executable, "-m", "compsuite.cli", "list"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "compsuite: error: COMPSUITE_KERNELS=bogus: expected openblas (the default), mkl or "
        "machine"]


def test_a_run_pins_its_kernels_by_default_and_records_them(tmp_path):
    """`compsuite run` as a user runs it (the tests themselves use --machine-kernels:
    tests/conftest.py): the result records pinned AVX2 kernels, what did the matrix
    products (OpenBLAS where it can run) and the threads."""
    import json

    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k not in (*kernels.PINNED, kernels.STATE)}
    out = subprocess.run([sys.executable, "-m", "compsuite.cli", "run", "majority", "--profile",
                          "tiny", "--quiet", "--seeds", "1", "--data-root", str(tmp_path / "D"),
                          "--runs-root", str(tmp_path / "r"), "--results-root",
                          str(tmp_path / "res")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    results = list((tmp_path / "r").rglob("result.json"))
    assert results
    for f in results:
        r = json.loads(f.read_text())
        assert r["kernels"]["pinned"] is True and r["kernels"]["cpu"] == kernels.cpu_model()
        assert r["kernels"]["torch_cpu_capability"] in ("AVX2", "DEFAULT")
        assert r["kernels"]["matrix_products"].startswith(
            "OpenBLAS" if kernels.openblas_missing() is None else "MKL")
        assert r["threads"] == 1


def user_env() -> dict:
    """This environment without the tests' kernel setting (tests/conftest.py)."""
    drop = (*kernels.PINNED, *kernels.OPENBLAS, kernels.STATE, "LD_PRELOAD",
            "OPENBLAS_NUM_THREADS")
    return {k: v for k, v in os.environ.items() if k not in drop}


PRODUCT = """
import hashlib, subprocess, sys
from compsuite import kernels
kernels.setup(sys.argv[1:])
import torch
kernels.set_threads(1)
g = torch.Generator().manual_seed(0)
a, b = torch.randn(96, 200, generator=g), torch.randn(200, 50, generator=g)
print(hashlib.sha1((a @ b).numpy().tobytes()).hexdigest())
"""


def product(*argv: str, env: dict | None = None) -> str:
    """The checksum of one matrix product computed by a fresh process with ``argv``'s
    kernel options."""
    out = subprocess.run([sys.executable, "-c", PRODUCT, *argv], env=env or user_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_openblas_kernels_do_the_products_here_and_in_the_processes_started(tmp_path):
    """--openblas-kernels: OpenBLAS's sgemm_ takes torch's products over in the process
    (loaded before torch) and in a child (LD_PRELOAD, inherited), with the same sums;
    MKL's pinned branch sums otherwise, so the option does reach torch."""
    import pytest

    if not os.path.isfile(kernels.shim_path()):
        pytest.skip(f"no OpenBLAS library at {kernels.shim_path()} (scripts/setup_env.sh)")
    here = product("--openblas-kernels")
    assert here == product("--openblas-kernels")   # deterministic
    assert here == product()   # the default
    assert here != product("--mkl-kernels")   # MKL, COMPATIBLE
    child = subprocess.run([sys.executable, "-c", "import os, subprocess, sys\n"
                            "from compsuite import kernels\n"
                            "kernels.setup(['--openblas-kernels'])\n"
                            "print(os.environ['LD_PRELOAD'])\n"
                            "sys.stdout.flush()\n"
                            f"subprocess.run([sys.executable, '-c', {PRODUCT!r}], check=True)"],
                           env=user_env(), capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    preload, child_sum = child.stdout.split()
    assert preload == kernels.shim_path() and child_sum == here


PRODUCTS = """
import hashlib
from compsuite import kernels
kernels.setup(["--openblas-kernels"])
import torch
h = hashlib.sha1()
g = torch.Generator().manual_seed(0)
for threads in (1, 2):
    kernels.set_threads(threads)
    for m, k, n in ((8, 16, 8), (96, 200, 50), (512, 700, 300), (1000, 64, 1000)):
        a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
        for c in (a @ b, b.t() @ a.t(), torch.nn.functional.linear(a, b.t().contiguous())):
            h.update(c.numpy().tobytes())
print(h.hexdigest())
"""
#: PRODUCTS' checksum as an AMD EPYC computed it (2026-11-29; torch 2.13.0,
#: scipy-openblas32 0.3.34.481.3): --openblas-kernels promises the same sums on every x86
#: CPU with AVX2 and FMA, so a machine of another vendor or generation must print it too
PRODUCTS_SUM = "3265186e2fa3f5388f1632e4e944b813bedfa6df"


def test_openblas_products_are_the_same_on_this_cpu_as_on_the_recorded_one():
    """Matrix products of small (OpenBLAS's small-matrix kernels) to blocked sizes,
    transposed and not, at one and two threads, give the checksum recorded on another
    machine: the core type, not the CPU, decides OpenBLAS's sums.  A failure here means
    that promise does not hold on this CPU (docs/reproducibility.md)."""
    import pytest

    if not os.path.isfile(kernels.shim_path()):
        pytest.skip(f"no OpenBLAS library at {kernels.shim_path()} (scripts/setup_env.sh)")
    out = subprocess.run([sys.executable, "-c", PRODUCTS], env=user_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == PRODUCTS_SUM, f"on {kernels.cpu_model()}"


def test_a_process_started_with_openblas_preloaded_sets_its_threads():
    """A Slurm job inherits --openblas-kernels' environment (the library preloaded, one
    OpenBLAS thread) and sets the unit's threads itself: at two threads its products
    are those of a run that loaded OpenBLAS itself and set two threads."""
    import pytest

    if not os.path.isfile(kernels.shim_path()):
        pytest.skip(f"no OpenBLAS library at {kernels.shim_path()} (scripts/setup_env.sh)")
    body = ("g = torch.Generator().manual_seed(0)\n"
            "a, b = torch.randn(512, 700, generator=g), torch.randn(700, 300, generator=g)\n"
            "print(hashlib.sha1((a @ b).numpy().tobytes()).hexdigest())\n")
    own = ("import hashlib\nfrom compsuite import kernels\n"
           "kernels.setup(['--openblas-kernels'])\nimport torch\nkernels.set_threads(2)\n")
    job = "import hashlib\nfrom compsuite import kernels\nimport torch\nkernels.set_threads(2)\n"
    env = {**user_env(), **kernels.PINNED, **kernels.OPENBLAS, kernels.STATE: "openblas",
           "LD_PRELOAD": kernels.shim_path(), "OPENBLAS_NUM_THREADS": "1"}
    sums = [subprocess.run([sys.executable, "-c", code + body], env=e, capture_output=True,
                           text=True, timeout=120, check=True).stdout.strip()
            for code, e in ((own, user_env()), (job, env), (job.replace("(2)", "(1)"), env))]
    assert sums[0] == sums[1] != sums[2]   # two threads sum otherwise than one


def test_openblas_kernels_without_the_library_are_one_line():
    env = {**user_env(), "COMPSUITE_OPENBLAS_SHIM": "/nonexistent/libsgemm_openblas.so"}
    out = subprocess.run([sys.executable, "-m", "compsuite.cli", "list", "--openblas-kernels"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "compsuite: error: --openblas-kernels: no OpenBLAS library at "
        "/nonexistent/libsgemm_openblas.so; scripts/setup_env.sh builds it (it needs a C "
        "compiler, cc)"]
    both = subprocess.run([sys.executable, "-m", "compsuite.cli", "list", "--openblas-kernels",
                           "--machine-kernels"], env=user_env(), capture_output=True,
                          text=True, timeout=120)
    assert both.returncode == 1 and "give one of them" in both.stderr


def test_a_run_with_openblas_kernels_records_them(tmp_path):
    import json

    import pytest

    from conftest import ROOT

    if not os.path.isfile(kernels.shim_path()):
        pytest.skip(f"no OpenBLAS library at {kernels.shim_path()} (scripts/setup_env.sh)")
    out = subprocess.run([sys.executable, "-m", "compsuite.cli", "run", "majority", "--profile",
                          "tiny", "--quiet", "--seeds", "1", "--openblas-kernels",
                          "--data-root", str(tmp_path / "D"), "--runs-root", str(tmp_path / "r"),
                          "--results-root", str(tmp_path / "res")], cwd=ROOT, env=user_env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    results = list((tmp_path / "r").rglob("result.json"))
    assert results
    for f in results:
        k = json.loads(f.read_text())["kernels"]
        assert k["pinned"] is True
        assert k["matrix_products"].startswith("OpenBLAS (scipy-openblas32 ")
        assert k["matrix_products"].endswith(", Haswell") and k["openblas_threads"] == 1


def test_the_kernel_variables_are_as_before_the_tests_above():
    """The tests above set the variables in this process: none may reach later tests
    (a command they start would compute with other kernels than the runs it is
    compared with)."""
    assert os.environ.get(kernels.STATE) == "machine"   # tests/conftest.py
    assert not any(k in os.environ for k in kernels.PINNED)
