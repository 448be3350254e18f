#!/usr/bin/env bash
# Create (or bring up to date) the compsuite virtual environment.
#
# Idempotent: a stamp file records a hash of everything that decides the
# environment (constraints, requirements, setup.py, this script); when it matches,
# the script returns at once.  Both README commands (./run_all.sh and
# ./scripts/test.sh) call it, so a fresh clone needs nothing done first.
#
#   COMPSUITE_VENV   where the environment lives (default: .venv in the checkout)
#   PYTHON           the interpreter to build it from (default: python3.11, else python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${COMPSUITE_VENV:-$ROOT/.venv}"
STAMP="$VENV/.compsuite-env-stamp"
cd "$ROOT"

want="$(cat constraints.txt scripts/requirements-runtime.txt setup.py scripts/setup_env.sh \
        compsuite/_startup_hook.py compsuite/sgemm_openblas.c | sha256sum | cut -d' ' -f1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  exit 0
fi

PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else 1)'; then
  echo "setup_env: need Python >= 3.11, found $("$PY" --version 2>&1) at $PY" >&2
  exit 1
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup_env: creating $VENV"
  "$PY" -m venv "$VENV"
fi
# pip warns once per package about this machine's optional local indexes; keep errors only.
quiet_pip() {
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -c "$ROOT/constraints.txt" "$@" \
    2> >(grep -v -e "is ignored: it is neither a file nor a directory" \
                 -e "requires torch<2.3" -e "requires torchaudio" -e "requires waitress" \
                 -e "requires ctranslate2" -e "requires flask" \
                 -e "dependency resolver does not currently take" >&2)
}
pip=(quiet_pip)

echo "setup_env: torch (CPU) and build tools"
"${pip[@]}" torch==2.13.0 setuptools wheel cython numpy

# fairseq-fixed builds C extensions against the installed torch: no build isolation
# (an isolated build would fetch another torch).  --no-deps: it asks for torchaudio,
# which has no release for torch 2.13 and is only used by fairseq's speech examples.
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('fairseq-fixed') != '0.12.3.1')" 2>/dev/null; then
  echo "setup_env: fairseq-fixed (builds its extensions, about 2-4 minutes)"
  "${pip[@]}" --no-deps --no-build-isolation fairseq-fixed==0.12.3.1
fi
# OpenNMT-py 3.5.1 declares torch<2.3 but runs on 2.13: no deps, its imports below.
echo "setup_env: OpenNMT-py and runtime dependencies"
"${pip[@]}" --no-deps OpenNMT-py==3.5.1
"${pip[@]}" -r scripts/requirements-runtime.txt

# 8-bit loading for the hf backend (load_in_8bit: the SGET authors' Llama 2 setting)
# needs bitsandbytes, which needs CUDA: only where a GPU driver is present.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  echo "setup_env: bitsandbytes (a CUDA GPU is present)"
  "${pip[@]}" bitsandbytes || echo "setup_env: bitsandbytes failed; load_in_8bit will be refused" >&2
fi

# The matrix products' kernels (compsuite/kernels.py): the scipy-openblas32 wheel's
# OpenBLAS prefixes its symbols; a small library built here gives torch the unprefixed
# sgemm_ it calls (compsuite/sgemm_openblas.c).  Without a C compiler a run falls back to
# MKL's COMPATIBLE branch, with a note (other numbers), and --openblas-kernels is refused.
blas_dir="$VENV/lib/compsuite-blas"
if command -v cc >/dev/null 2>&1; then
  lib="$("$VENV/bin/python" -c 'import scipy_openblas32 as s; print(s.get_lib_dir())')"
  mkdir -p "$blas_dir"
  cc -O2 -shared -fPIC -o "$blas_dir/libsgemm_openblas.so.tmp" compsuite/sgemm_openblas.c \
     -L"$lib" -lscipy_openblas -Wl,-rpath,"$lib" \
    && mv "$blas_dir/libsgemm_openblas.so.tmp" "$blas_dir/libsgemm_openblas.so" \
    || echo "setup_env: building the OpenBLAS library failed; runs will use MKL's COMPATIBLE branch (other numbers)" >&2
else
  echo "setup_env: no C compiler (cc): runs will use MKL's COMPATIBLE branch for the matrix products (other numbers)" >&2
fi

echo "setup_env: compsuite (editable)"
"${pip[@]}" --no-deps --no-build-isolation -e "$ROOT"

# A startup hook, active only in this environment, that lets fairseq and OpenNMT-py
# checkpoints load under torch>=2.6's weights_only=True (see compsuite/torch_compat.py).
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "import compsuite._startup_hook" > "$site/compsuite_startup_hook.pth"

"$VENV/bin/python" -c "import fairseq, onmt, transformers, peft, compsuite.data_prep, compsuite.eval" 2>/dev/null \
  || { echo "setup_env: import check failed" >&2; exit 1; }
echo "$want" > "$STAMP"
echo "setup_env: ready ($VENV)"
