#!/usr/bin/env bash
# CPU training speed at 1 and N threads, ours against PyTorch's (the
# reference of ../shared/bench/torch_reference.py), interleaved in one run:
# each round runs gpuwizard at 1 thread, gpuwizard at N, torch at 1 and
# torch at N, then a capacity probe (one busy process, then N at once) that
# says how many cores the machine really gave this round (on a shared
# machine, other tenants take some). Prints per-round figures, then the
# medians and the ratios.
#   ROUNDS=9 THREADS=2 MODEL=lenet BATCH=64 bench/cpu-scaling.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-7}
THREADS=${THREADS:-2}
MODEL=${MODEL:-lenet}
BATCH=${BATCH:-64}
STEPS=${STEPS:-80}
PY=${PY:-/usr/bin/python3}
REF=${REF:-../shared/bench/torch_reference.py}
[ -f "$REF" ] || REF=shared/bench/torch_reference.py
[ -x bin/gpuwizard ] || make build >/dev/null
"$PY" -c 'import torch' 2>/dev/null || { echo "$PY has no torch (Debian: apt-get install python3-torch)" >&2; exit 2; }
field() { sed -E "s/.* $1=([0-9.]+).*/\1/"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ours() { bin/gpuwizard bench --model "$MODEL" --batch "$BATCH" --steps "$STEPS" --threads "$1" | field img_per_s; }
torch() {
  OMP_NUM_THREADS=$1 OPENBLAS_NUM_THREADS=$1 MKL_NUM_THREADS=$1 \
    "$PY" "$REF" --model "$MODEL" --bs "$BATCH" --steps "$STEPS" --threads "$1" | field img_per_s
}
busy() { awk 'BEGIN { for (i = 0; i < 4e7; i++) s += i }'; }
now() { date +%s%N; }
capacity() { # cores available: N busy processes at once against one alone
  local s e one all
  s=$(now); busy; e=$(now); one=$((e - s))
  s=$(now); for _ in $(seq "$THREADS"); do busy & done; wait; e=$(now); all=$((e - s))
  awk "BEGIN { printf \"%.2f\", $THREADS * $one / $all }"
}
o1=(); oN=(); t1=(); tN=(); cap=()
for r in $(seq "$ROUNDS"); do
  o1+=("$(ours 1)"); oN+=("$(ours "$THREADS")"); t1+=("$(torch 1)"); tN+=("$(torch "$THREADS")"); cap+=("$(capacity)")
  echo "round $r: gpuwizard 1=${o1[-1]} $THREADS=${oN[-1]} torch 1=${t1[-1]} $THREADS=${tN[-1]} img/s; cores available ${cap[-1]}"
done
a1=$(median "${o1[@]}"); aN=$(median "${oN[@]}"); b1=$(median "${t1[@]}"); bN=$(median "${tN[@]}"); c=$(median "${cap[@]}")
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
echo "RESULT bench=cpu-scaling model=$MODEL bs=$BATCH threads=$THREADS rounds=$ROUNDS gpuwizard_1=$a1 gpuwizard_$THREADS=$aN torch_1=$b1 torch_$THREADS=$bN ours_scaling=$(ratio "$aN" "$a1") torch_scaling=$(ratio "$bN" "$b1") vs_torch_1=$(ratio "$a1" "$b1") vs_torch_$THREADS=$(ratio "$aN" "$bN") cores_available=$c"
