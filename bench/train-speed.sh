#!/usr/bin/env bash
# Training speed against PyTorch on the same workload (../shared/bench/
# torch_reference.py: float32, Adam 1e-3, softmax cross-entropy, random
# MNIST-shaped data, 4 batches cycled), interleaved A B A B ... in one run;
# prints the medians and the ratio gpuwizard / PyTorch per model, for
# gpuwizard's executor (gorgonia's tape machine is no longer an engine: it
# only checks the executor in the tests).
# On CUDA the executor runs twice (its step replayed as a CUDA graph, and
# --eager), and PyTorch twice (eager, and --graph: the whole step in one
# CUDA graph); each of ours is compared with each of theirs.
#   ROUNDS=5 THREADS=1 BATCH=64 MODELS="lenet mlp" DEVICE=cpu bench/train-speed.sh
#   DEVICE=cuda BATCH=256 PY=python3 bench/train-speed.sh   (on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-1}
BATCH=${BATCH:-64}
MODELS=${MODELS:-"lenet mlp"}
DEVICE=${DEVICE:-cpu}
PY=${PY:-/usr/bin/python3}
REF=${REF:-../shared/bench/torch_reference.py}
[ -f "$REF" ] || REF=shared/bench/torch_reference.py
[ -f "$REF" ] || REF=bin/torch_reference.py   # from make gpu-kit
[ -x bin/gpuwizard ] || make build >/dev/null
"$PY" -c 'import torch' 2>/dev/null || { echo "$PY has no torch (Debian: apt-get install python3-torch)" >&2; exit 2; }
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
field() { sed -E "s/.* $1=([0-9.]+).*/\1/"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ENGINES=${ENGINES:-"exec"}
REFS=("")                                   # PyTorch's variants: eager
if [ "$DEVICE" != cpu ]; then ENGINES="exec exec-eager"; REFS=("" "--graph"); fi
ours() { # engine: exec or exec-eager
  local e=$1 flags=()
  [ "$e" = exec-eager ] && { e=exec; flags=(--eager); }
  bin/gpuwizard bench --engine "$e" "${flags[@]}" --model "$m" --batch "$BATCH" --steps "$steps" --threads "$THREADS" --device "$DEVICE" | field img_per_s
}
for m in $MODELS; do
  steps=60; [ "$m" = mlp ] && steps=300
  [ "$DEVICE" = cpu ] || steps=500
  declare -A mine=() theirs=()
  for _ in $(seq "$ROUNDS"); do
    for e in $ENGINES; do mine[$e]+="$(ours "$e") "; done
    for r in "${REFS[@]}"; do
      # shellcheck disable=SC2086
      theirs[ref$r]+="$("$PY" "$REF" --model "$m" --bs "$BATCH" --steps "$steps" --threads "$THREADS" --device "$DEVICE" $r | field img_per_s) "
    done
  done
  for r in "${REFS[@]}"; do
    # shellcheck disable=SC2086
    b=$(median ${theirs[ref$r]})
    ref=torch; [ -n "$r" ] && ref=torch-cudagraph
    for e in $ENGINES; do
      # shellcheck disable=SC2086
      a=$(median ${mine[$e]})
      echo "RESULT bench=train-speed model=$m engine=$e reference=$ref device=$DEVICE bs=$BATCH threads=$THREADS rounds=$ROUNDS gpuwizard_img_per_s=$a torch_img_per_s=$b ratio=$(awk "BEGIN { printf \"%.2f\", $a / $b }")"
    done
  done
  unset mine theirs
done
