#!/usr/bin/env bash
# The detector's accuracy against its PyTorch twin, side by side: gpuwizard
# trains det-n on the data (default builtin-detect, its default run: 10
# epochs, batch 16, 128 px); the twin (bench/det_twin.py: same layers,
# initialisation, targets, loss, optimiser and schedule) trains on the same
# pixels (bench/detdump) and its validation heads are scored by gpuwizard's
# own decoding and mAP. Prints both RESULT lines and the wall time of each.
#   bench/det-accuracy.sh
#   EPOCHS=3 THREADS=2 bench/det-accuracy.sh
#   DATA=~/datasets/coco8/data.yaml SIZE=320 bench/det-accuracy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-builtin-detect}
SIZE=${SIZE:-128}
EPOCHS=${EPOCHS:-10}
BATCH=${BATCH:-16}
THREADS=${THREADS:-2}
PY=${PY:-/usr/bin/python3}
[ -x bin/gpuwizard ] || make build >/dev/null
"$PY" -c 'import torch' 2>/dev/null || { echo "$PY has no torch (Debian: apt-get install python3-torch)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
t0=$(date +%s)
bin/gpuwizard train --data "$DATA" --image-size "$SIZE" --epochs "$EPOCHS" --batch "$BATCH" --threads "$THREADS" \
  --device cpu --project "$work/runs" --name ours --json > "$work/ours.jsonl"
t1=$(date +%s)
"$PY" - "$work/runs/ours/results.json" "$((t1 - t0))" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["detect"]
print(f"RESULT impl=gpuwizard mAP50={m['map50']:.4f} mAP50-95={m['map50_95']:.4f} wall_s={sys.argv[2]}")
PY
go run -tags migrated_fynedo ./bench/detdump -data "$DATA" -size "$SIZE" -out "$work/dump" >/dev/null
t0=$(date +%s)
"$PY" bench/det_twin.py "$work/dump" --epochs "$EPOCHS" --batch "$BATCH" --threads "$THREADS" --heads "$work/dump/heads.f32" >/dev/null
t1=$(date +%s)
line=$(go run -tags migrated_fynedo ./bench/detdump -data "$DATA" -size "$SIZE" -heads "$work/dump/heads.f32" | grep RESULT)
echo "$line wall_s=$((t1 - t0))"
