#!/usr/bin/env bash
# A detector's training speed against its PyTorch twin (bench/det_twin.py:
# same layers, loss and optimiser) on the same workload (random colour
# canvases, 10 classes, two boxes an image), interleaved A B A B ...;
# prints the medians of images/s and of images per CPU-second (the fairer
# figure on a machine shared with other work) and the ratios
# gpuwizard / PyTorch.
#   ROUNDS=3 THREADS=2 MODEL=det-n SIZE=320 BATCH=16 bench/det-speed.sh
#   DEVICE=cuda SIZE=320 BATCH=64 bench/det-speed.sh   (on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
MODEL=${MODEL:-det-n}
SIZE=${SIZE:-320}
BATCH=${BATCH:-16}
STEPS=${STEPS:-10}
DEVICE=${DEVICE:-cpu}
PY=${PY:-/usr/bin/python3}
[ -x bin/gpuwizard ] || make build >/dev/null
"$PY" -c 'import torch' 2>/dev/null || { echo "$PY has no torch (Debian: apt-get install python3-torch)" >&2; exit 2; }
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
field() { sed -E "s/.* $1=([0-9.]+).*/\1/"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ours_s=() ours_c=() twin_s=() twin_c=()
for r in $(seq "$ROUNDS"); do
  line=$(bin/gpuwizard bench --model "$MODEL" --image-size "$SIZE" --batch "$BATCH" --steps "$STEPS" --threads "$THREADS" --device "$DEVICE" | grep RESULT)
  echo "$line"
  ours_s+=("$(field img_per_s <<<"$line")")
  ours_c+=("$(field img_per_cpu_s <<<"$line")")
  line=$("$PY" bench/det_twin.py --random "$SIZE" --model "$MODEL" --batch "$BATCH" --speed "$STEPS" --threads "$THREADS" --device "$DEVICE" | grep RESULT)
  echo "$line"
  twin_s+=("$(field images_per_s <<<"$line")")
  twin_c+=("$(field images_per_cpu_s <<<"$line")")
done
a=$(median "${ours_s[@]}") b=$(median "${twin_s[@]}") c=$(median "${ours_c[@]}") d=$(median "${twin_c[@]}")
echo "RESULT det_speed model=$MODEL size=$SIZE batch=$BATCH threads=$THREADS device=$DEVICE gpuwizard_img_per_s=$a twin_img_per_s=$b ratio=$(awk "BEGIN{printf \"%.2f\", $a/$b}") gpuwizard_img_per_cpu_s=$c twin_img_per_cpu_s=$d cpu_ratio=$(awk "BEGIN{printf \"%.2f\", $c/$d}")"
