#!/usr/bin/env bash
# One training of the CTL++ quick search (data_prep/ctlpp/doc.md, "Making the quick
# Transformer and NDR learn"): the quick profile's fairseq command for the Transformer or
# the NDR, without checkpoints, with the settings given after SEED overriding it.
#
#   scripts/ctlpp_quick_search.sh DATA/fairseq-bin OUT {transformer|ndr} SEED [fairseq options]
#   scripts/ctlpp_quick_search.sh data/ctlpp/A/n20000-f16-len4/seed1/fairseq-bin search/N6 ndr 1 \
#       --layers 6 --test-layers 7
#
# DATA comes from `compsuite data ctlpp generate --variant A --seed 1 --n-train 20000
# --n-test 500 --max-length 4 --n-functions 16 --toolkits fairseq --out DIR` (DIR/fairseq-bin).
# The log (OUT/train.log) has IID (`test`) and OOD (`test1`) accuracy every 500 updates.
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n 2,11p "$0"; exit 2; }
data=$1; out=$2; model=$3; seed=$4; shift 4
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${COMPSUITE_VENV:-$ROOT/.venv}/bin"
case "$model" in
  ndr) own=(--clip-norm 1.0 --gate-dropout 0.1 --weight-decay 0.0 --test-layers 5) ;;
  transformer) own=(--clip-norm 5.0 --weight-decay 0.0025) ;;
  *) echo "ctlpp_quick_search.sh: MODEL is transformer or ndr, not '$model'" >&2; exit 2 ;;
esac
[[ -d "$data" ]] || { echo "ctlpp_quick_search.sh: no data folder $data" >&2; exit 2; }
mkdir -p "$out"
# the suite's pinned kernels (compsuite/kernels.py) and one thread, as the profile trains
eval "$("$PY/python" -c 'from compsuite.kernels import PINNED
for k, v in PINNED.items(): print(f"export {k}={v}")')"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
echo "$model seed $seed $*" > "$out/args"
"$PY/fairseq-train" "$data" --user-dir "$ROOT/fairseq_plugins" --log-format simple \
  --log-interval 100 --task sequence_classification --criterion sequence_classification \
  --best-checkpoint-metric accuracy --maximize-best-checkpoint-metric \
  --valid-subset valid,test,test1 --arch "ctlpp_$model" --optimizer adam --lr 0.001 \
  --lr-scheduler fixed --warmup-updates 100 --batch-size 128 --dropout 0.0 \
  --max-update 4500 --length-buckets --rebuild-batches --validate-interval-updates 500 \
  --validate-interval 1000 --no-save --d-model 64 --heads 4 --ff 128 --layers 4 \
  --attention-dropout 0.1 "${own[@]}" --seed "$seed" --save-dir "$out/checkpoints" --cpu "$@" \
  > "$out/train.log" 2>&1
grep "valid on 'test" "$out/train.log" | tail -n 2
