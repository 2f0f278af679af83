#!/usr/bin/env bash
# Hostile and broken datasets cannot hurt the machine or the runs (issue 13).
# Builds each input (a PNG bomb, links to /dev/zero, named pipes, gzip IDX
# bombs, empty YOLO datasets, flipped bits in checkpoints, a run killed
# before its first checkpoint, two --resume at once), runs bin/gpuwizard on
# it under /usr/bin/time -v and prints, per case, the exit code, the peak
# RSS, the wall time and the message that names the problem.
# Goals: peak RSS under 500 MiB, a clear error or warning within 10 s.
#   bench/hostile-data.sh            # a Markdown table, then RESULT
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x bin/gpuwizard ] || make build >/dev/null
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
G=$PWD/bin/gpuwizard
RSS_GOAL=500 TIME_GOAL=10 LIMIT=60
W=$(mktemp -d)
bg=()
cleanup() { for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$W"; }
trap cleanup EXIT
echo "building the inputs in $W ..." >&2
go run ./bench/hostile -out "$W" || exit 1
R=$W/runs
TINY=(--model mlp --image-size 8 --batch 16 --lr 0.01 --warmup-epochs 0 --project "$R")

n=0 fails=0
echo "| case | exit | peak RSS | time | message |"
echo "|---|---|---|---|---|"
# measure NAME REGEX CMD...: run CMD (time limit LIMIT s), find REGEX in its
# output, print a table row, count a failure when a goal is missed.
measure() {
  local name=$1 re=$2; shift 2
  n=$((n + 1))
  local t=$W/time.$n o=$W/out.$n
  /usr/bin/time -v -o "$t" timeout "$LIMIT" "$@" >"$o" 2>&1
  local rc=$?
  local kb wall s msg ok=PASS
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$t")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$t")
  s=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  msg=$(grep -m1 -E "$re" "$o" | sed "s|$W|\$W|g; s/^ *//; s/|/\\\\|/g" | cut -c1-400)
  [ -n "$msg" ] || { ok="FAIL (no message matching /$re/)"; }
  [ "$rc" = 124 ] && ok="FAIL (hung: killed after ${LIMIT}s)"
  [ "$((kb / 1024))" -lt "$RSS_GOAL" ] || ok="FAIL (RSS)"
  awk "BEGIN { exit !($s < $TIME_GOAL) }" || ok="FAIL (time)"
  [ "$ok" = PASS ] || fails=$((fails + 1))
  printf '| %s | %s | %d MiB | %.2f s | %s |\n' "$name" "$rc" "$((kb / 1024))" "$s" "${msg:-(none)}"
  [ "$ok" = PASS ] || { echo "  $name: $ok; output:" >&2; sed 's/^/    /' "$o" | head -20 >&2; }
}

# A trained run for the predict and checkpoint cases.
"$G" train --data "$W/good" "${TINY[@]}" --epochs 2 --name base >/dev/null 2>&1 || { echo "setup: training failed" >&2; exit 1; }

# 1. Image bombs: four 3.5 MB PNGs that declare 30000x30000 (3.6 GB each).
B=$W/bombs; cp -r "$W/good" "$B"
for i in 1 2; do cp "$W/bomb.png" "$B/left/bomb$i.png"; cp "$W/bomb.png" "$B/right/bomb$i.png"; done
measure "PNG bomb x4 in a folder: lint" "skipped without decoding" "$G" lint "$B"
measure "PNG bomb x4 in a folder: train" "skipped without decoding" "$G" train --data "$B" "${TINY[@]}" --epochs 1 --name bombs
L=$W/large; cp -r "$W/good" "$L"; cp "$W/big.png" "$L/left/big1.png"; cp "$W/big.png" "$L/right/big2.png"
measure "PNG 7000x7000 (49 Mpx, within the limit) x2: train" "sizes +8x8 to 7000x7000" "$G" train --data "$L" "${TINY[@]}" --epochs 1 --name large
measure "PNG bomb: predict" "more than the 50 Mpx" "$G" predict --model "$R/base/best" "$W/bomb.png"

# 2. Device files and pipes.
Z=$W/zero; cp -r "$W/good" "$Z"; ln -s /dev/zero "$Z/left/zero.png"
measure "image linked to /dev/zero: lint" "is a character device" "$G" lint "$Z"
measure "image linked to /dev/zero: train" "is a character device" "$G" train --data "$Z" "${TINY[@]}" --epochs 1 --name zero
mkdir -p "$W/cifar"; ln -s /dev/zero "$W/cifar/data_batch_1.bin"
measure "CIFAR batch linked to /dev/zero: train" "is a character device" "$G" train --data "$W/cifar" "${TINY[@]}" --name cifar
Y=$W/yolo-zero; mkdir -p "$Y/images/val" "$Y/labels/val"; cp "$W/good/left/000.png" "$Y/images/val/a.png"
echo "0 0.5 0.5 0.2 0.2" >"$Y/labels/val/a.txt"; ln -s /dev/zero "$Y/images/zero.jpg"
printf 'images/val/a.png\nimages/zero.jpg\n/dev/zero\n' >"$Y/train.txt"
printf 'train: train.txt\nval: images/val\nnames: [a]\n' >"$Y/data.yaml"
measure "YOLO list entries on /dev/zero: lint" "is a character device" "$G" lint "$Y/data.yaml"
F=$W/fifo; cp -r "$W/good" "$F"; mkfifo "$F/left/pipe.png"
measure "FIFO in an image folder: lint" "named pipe" "$G" lint "$F"
measure "FIFO in an image folder: train" "named pipe" "$G" train --data "$F" "${TINY[@]}" --epochs 1 --name fifo
mkfifo "$W/run.yaml"
measure "FIFO as --config: train" "named pipe" "$G" train --config "$W/run.yaml"
mkdir -p "$W/yolo-fifo"; mkfifo "$W/yolo-fifo/data.yaml"
measure "FIFO as data.yaml: lint" "named pipe" "$G" lint "$W/yolo-fifo/data.yaml"

# 3. gzip bombs: 2.6 MB that inflates to 2.7 GB behind an MNIST header;
# a valid header with huge dimensions.
measure "gzip IDX bomb (2.6 MB -> 2.7 GB): lint" "train +[0-9]+ images" "$G" lint "$W/idx-bomb"
measure "IDX header 3000000x1000x1000: lint" "the header declares" "$G" lint "$W/idx-huge"
measure "IDX header 3000000x1000x1000: train" "the header declares" "$G" train --data "$W/idx-huge" "${TINY[@]}" --name huge

# 4. Empty and escaping YOLO datasets.
E=$W/yolo-empty; mkdir -p "$E"; : >"$E/data.yaml"
measure "empty data.yaml (0 bytes): lint" "expected keys" "$G" lint "$E/data.yaml"
N=$W/yolo-none; mkdir -p "$N/images/train" "$N/images/val"
printf 'path: .\ntrain: images/train\nval: images/val\nnames: [cat, dog]\n' >"$N/data.yaml"
measure "data.yaml with no images: lint" "the dataset has no images" "$G" lint "$N/data.yaml"
V=$W/yolo-noval; mkdir -p "$V/images/train" "$V/labels/train" "$V/images/val"; cp "$W/good/left/000.png" "$V/images/train/a.png"
echo "0 0.5 0.5 0.2 0.2" >"$V/labels/train/a.txt"; printf 'train: images/train\nval: images/val\nnames: [cat]\n' >"$V/data.yaml"
measure "data.yaml with an empty val split: lint" "split .* has no images" "$G" lint "$V/data.yaml"
O=$W/yolo-out; mkdir -p "$O"; printf 'path: /\ntrain: etc\nval: etc\nnames: [a]\n' >"$O/data.yaml"
measure "data.yaml path: / (outside): lint" "points outside" "$G" lint "$O/data.yaml"

# 5. Checkpoints: one flipped bit in best.ckpt, then in last.ckpt.
# flip FILE: flip bit 2 of byte 2000.
flip() { python3 -c "import sys; p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[2000] ^= 0x04; open(p, 'wb').write(b)" "$1"; }
cp -r "$R/base" "$R/flip"; flip "$R/flip/best.ckpt"
measure "flipped bit in best.ckpt: predict" "is damaged" "$G" predict --model "$R/flip/best" "$W/good/left/000.png"
cp "$R/base/best.ckpt" "$R/flip/best.ckpt"; flip "$R/flip/last.ckpt"
measure "flipped bit in last.ckpt: --resume" "is damaged" "$G" train --resume "$R/flip" --extend 1

# 6. Runs: killed before the first checkpoint; two --resume at once; stale
# temporary files of a killed save.
wait_for() { for _ in $(seq 600); do eval "$1" && return 0; sleep 0.05; done; return 1; }
"$G" train --data builtin --model lenet --epochs 1 --project "$R" --name killed >/dev/null 2>&1 & p=$!; bg+=("$p")
wait_for "[ -f '$R/killed/args.yaml' ]" && kill -9 "$p"; wait "$p" 2>/dev/null
measure "kill -9 before the first checkpoint: --resume" "no checkpoint" "$G" train --resume "$R/killed"
"$G" train --data builtin --model lenet --epochs 4 --project "$R" --name twice >/dev/null 2>&1 & p=$!; bg+=("$p")
wait_for "[ -f '$R/twice/last.ckpt' ]" && kill -9 "$p"; wait "$p" 2>/dev/null
"$G" train --resume "$R/twice" >/dev/null 2>&1 & a=$!; bg+=("$a")
wait_for "grep -qx '$a' '$R/twice/.lock' 2>/dev/null"
measure "two --resume of one run at once: the second" "PID [0-9]+" "$G" train --resume "$R/twice"
kill -INT "$a"; wait "$a" 2>/dev/null
cp -r "$R/base" "$R/stale"; echo torn >"$R/stale/.last.ckpt.tmp-1234567"; echo torn >"$R/stale/.best.ckpt.tmp-7654321"
measure "stale .last.ckpt.tmp-* after a killed save: next save" "stale temporary files removed" sh -c \
  "'$G' train --resume '$R/stale' --extend 1 && ! ls '$R'/stale/.*.tmp-* 2>/dev/null && echo 'stale temporary files removed'"

echo "RESULT bench=hostile-data cases=$n failed=$fails goal_rss_mib=$RSS_GOAL goal_s=$TIME_GOAL"
[ "$fails" = 0 ]
