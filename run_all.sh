#!/usr/bin/env bash
# Reproduce the studies' tables end to end: data, training, predictions, scores, reports.
#
#   ./run_all.sh                      quick profile of every study (creates .venv on first use)
#   ./run_all.sh pcfgset              one study
#   ./run_all.sh --profile paper      the papers' settings (for GPU users)
#   ./run_all.sh pcfgset --seeds 1 2 3
#   ./run_all.sh ctlpp --parts table1 --jobs 2   (any `compsuite run` option)
#
# Finished steps are skipped (by manifest / train.json / prediction files), so an
# interrupted run resumes where it stopped.  Results land in results/<study>/<profile>/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
./scripts/setup_env.sh
PY="${COMPSUITE_VENV:-$ROOT/.venv}/bin/python"

studies=()
while [[ $# -gt 0 && "$1" != --* ]]; do studies+=("$1"); shift; done
if [[ ${#studies[@]} -eq 0 ]]; then
  mapfile -t studies < <("$PY" -c "from compsuite.registry import default_studies; print('\n'.join(default_studies()))")
fi
has_profile=0
for a in "$@"; do [[ "$a" == "--profile" ]] && has_profile=1; done
extra=()
[[ $has_profile -eq 0 ]] && extra=(--profile quick)

start=$(date +%s)
for study in "${studies[@]}"; do
  echo "== $study"
  "$PY" -m compsuite.cli run "$study" "${extra[@]}" "$@"
done
echo "run_all: finished in $(( $(date +%s) - start )) s"
