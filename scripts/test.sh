#!/usr/bin/env bash
# The test command (README, .ci/run): sets up the environment if needed, then pytest.
# Extra arguments go to pytest (e.g. ./scripts/test.sh -k grammar).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
./scripts/setup_env.sh
exec "${COMPSUITE_VENV:-$ROOT/.venv}/bin/python" -m pytest "$@"
