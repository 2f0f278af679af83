#!/usr/bin/env bash
# CPU training speed at 1 and N threads, ours against PyTorch's (the
# reference of ../shared/bench/torch_reference.py), interleaved in one run:
# each round runs gpuwizard at 1 thread, gpuwizard at N, torch at 1 and
# torch at N, between two capacity probes (one busy process, then N at
# once) that say how many cores the machine really gave (on a shared
# machine, other tenants take some). Prints per-round figures, then the
# medians and ratios of all rounds, and of the quiet rounds: those whose
# probes both found at least QUIET cores (default N − 0.1).
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
QUIET=${QUIET:-$(awk "BEGIN { print $THREADS - 0.1 }")}
o1=(); oN=(); t1=(); tN=(); cap=(); q1=(); qN=(); p1=(); pN=()
for r in $(seq "$ROUNDS"); do
  before=$(capacity)
  o1+=("$(ours 1)"); oN+=("$(ours "$THREADS")"); t1+=("$(torch 1)"); tN+=("$(torch "$THREADS")")
  after=$(capacity)
  low=$(awk "BEGIN { print ($before < $after) ? $before : $after }"); cap+=("$low")
  quiet=no
  if awk "BEGIN { exit !($low >= $QUIET) }"; then
    quiet=yes; q1+=("${o1[-1]}"); qN+=("${oN[-1]}"); p1+=("${t1[-1]}"); pN+=("${tN[-1]}")
  fi
  echo "round $r: gpuwizard 1=${o1[-1]} $THREADS=${oN[-1]} torch 1=${t1[-1]} $THREADS=${tN[-1]} img/s; cores available $before then $after (quiet: $quiet)"
done
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
report() { # label, then the four lists' medians
  echo "RESULT bench=cpu-scaling rounds=$1 model=$MODEL bs=$BATCH threads=$THREADS n=$2 gpuwizard_1=$3 gpuwizard_$THREADS=$4 torch_1=$5 torch_$THREADS=$6 ours_scaling=$(ratio "$4" "$3") torch_scaling=$(ratio "$6" "$5") vs_torch_1=$(ratio "$3" "$5") vs_torch_$THREADS=$(ratio "$4" "$6")"
}
report all "$ROUNDS" "$(median "${o1[@]}")" "$(median "${oN[@]}")" "$(median "${t1[@]}")" "$(median "${tN[@]}")"
echo "cores available (the lower probe of each round): median $(median "${cap[@]}"), min $(printf '%s\n' "${cap[@]}" | sort -g | head -1)"
if [ ${#q1[@]} -gt 0 ]; then
  report quiet "${#q1[@]}" "$(median "${q1[@]}")" "$(median "${qN[@]}")" "$(median "${p1[@]}")" "$(median "${pN[@]}")"
else
  echo "no quiet round (both probes at least $QUIET cores): the machine was busy throughout; run again later"
fi
