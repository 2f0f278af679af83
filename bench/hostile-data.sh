#!/usr/bin/env bash
# Hostile and broken datasets, files and signals cannot hurt the machine,
# the user's files or the runs (issues 13 and 19). Builds each input (image
# and gzip bombs, links to /dev/zero and out of the dataset, named pipes,
# YOLO and COCO sets that are empty, huge or lying, flipped bits in
# checkpoints, runs killed at bad moments, a dropped SSH session; Windows
# paths, pasted Windows reports, long prose; processes that try to mislead
# or bloat gpuwizard watch), runs
# bin/gpuwizard on it under /usr/bin/time -v and prints, per case, the exit
# code, the peak RSS, the wall time, the bytes printed and the message that
# names the problem. A case whose process tree passes KILL_MIB is killed.
# Goals: peak RSS under 500 MiB (a larger per-case goal where the data is
# legitimately that large), a clear message within 20 s, the exit code the
# case expects.
#   bench/hostile-data.sh                 # a Markdown table, then RESULT
#   GPUWIZARD=/path/to/gpuwizard bench/hostile-data.sh   # another build
set -uo pipefail
cd "$(dirname "$0")/.."
G=${GPUWIZARD:-$PWD/bin/gpuwizard}
[ -x "$G" ] || make build >/dev/null
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
RSS_GOAL=500 TIME_GOAL=20 LIMIT=60 KILL_MIB=${KILL_MIB:-4096}
W=$(mktemp -d)
bg=() bg_dirs=()
cleanup() {
  for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
  for d in "${bg_dirs[@]}"; do rm -rf "$d"; done
  for f in "$W"/hung/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  rm -rf "$W"
}
trap cleanup EXIT
echo "building the inputs in $W ..." >&2
go run ./bench/hostile -out "$W" || exit 1
R=$W/runs
TINY=(--model mlp --image-size 8 --batch 16 --lr 0.01 --warmup-epochs 0 --project "$R")

n=0 fails=0
echo "| case | exit | peak RSS | time | printed | message |"
echo "|---|---|---|---|---|---|"
# tree PID: PID and its descendants.
tree() {
  local all=$1 pids=$1 kids
  while [ -n "$pids" ]; do
    kids=$(for p in $pids; do cat /proc/"$p"/task/*/children 2>/dev/null; done)
    all="$all $kids" pids=$kids
  done
  echo $all
}
# tree_rss PID: the resident KiB of PID and its descendants.
tree_rss() {
  local s=0 r
  for p in $(tree "$1"); do r=$(awk '/^VmRSS/ {print $2}' /proc/"$p"/status 2>/dev/null); s=$((s + ${r:-0})); done
  echo $s
}
# measure NAME REGEX CMD...: run CMD (time limit LIMIT s, killed past
# KILL_MIB), find REGEX in its output, print a table row, count a failure
# when a goal is missed. GOAL=MiB overrides the RSS goal, RC=N expects
# that exit code.
measure() {
  local name=$1 re=$2; shift 2
  local goal=${GOAL:-$RSS_GOAL} want_rc=${RC:-}
  n=$((n + 1))
  local t=$W/time.$n o=$W/out.$n
  /usr/bin/time -v -o "$t" timeout -k 5 "$LIMIT" "$@" >"$o" 2>&1 &
  local tp=$! killed=""
  while kill -0 "$tp" 2>/dev/null; do
    if [ "$(tree_rss "$tp")" -gt $((KILL_MIB * 1024)) ]; then
      killed=1; for p in $(tree "$tp"); do [ "$p" = "$tp" ] || kill -9 "$p" 2>/dev/null; done
    fi
    sleep 0.2
  done
  wait "$tp"
  local rc=$?
  local kb wall s msg bytes ok=PASS
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$t")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$t")
  s=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  bytes=$(wc -c <"$o")
  msg=$(grep -a -m1 -E "$re" "$o" | sed "s|$W|\$W|g; s/^ *//; s/|/\\\\|/g" | tr -d '\000-\010\016-\037' | cut -c1-400)
  [ -n "$msg" ] || { ok="FAIL (no message matching /$re/)"; }
  [ -z "$want_rc" ] || [ "$rc" = "$want_rc" ] || ok="FAIL (exit $rc, want $want_rc)"
  { [ "$rc" = 124 ] || [ "$rc" = 137 ] && [ -z "$killed" ]; } && ok="FAIL (hung: killed after ${LIMIT}s)"
  [ -n "$killed" ] && { ok="FAIL (killed past $KILL_MIB MiB)"; kb=$((KILL_MIB * 1024)); }
  [ "$((kb / 1024))" -lt "$goal" ] || ok="FAIL (RSS)"
  awk "BEGIN { exit !($s < $TIME_GOAL) }" || ok="FAIL (time)"
  [ "$ok" = PASS ] || fails=$((fails + 1))
  printf '| %s | %s | %s%d MiB | %.2f s | %d B | %s |\n' "$name" "$rc" "${killed:+>}" "$((kb / 1024))" "$s" "$bytes" "${msg:-(none)}"
  [ "$ok" = PASS ] || { echo "  $name: $ok; output:" >&2; sed 's/^/    /' "$o" | head -20 | cut -c1-300 >&2; }
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
cp -r "$R/killed" "$R/firstsave" # for section 7, before the resume below trains it
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

# ---- Round two (issue 19) ----
# 7. The run folder never writes through a link; kills and hang-ups leave
# a resumable run.
cp -r "$R/base" "$R/locklink"; echo "keep me" >"$W/precious.txt"
rm -f "$R/locklink/.lock"; ln -s "$W/precious.txt" "$R/locklink/.lock"
measure ".lock linked to a user's file: --resume" "precious.txt untouched" sh -c \
  "'$G' train --resume '$R/locklink' --extend 1 >/dev/null 2>&1; grep -qx 'keep me' '$W/precious.txt' && echo 'precious.txt untouched'"
head -c 1048576 /dev/urandom >"$R/firstsave/.last.ckpt.tmp-4242"
measure "kill -9 during the first checkpoint save: --resume" "resumed from the start" sh -c \
  "'$G' train --resume '$R/firstsave' && [ -f '$R/firstsave/last.ckpt' ] && ! ls '$R'/firstsave/.*.tmp-* 2>/dev/null && echo 'resumed from the start, temporary file removed'"
cat >"$W/hup.sh" <<HUP
'$G' train --data builtin --model lenet --epochs 50 --project '$R' --name hup >'$W/hup.log' 2>&1 & p=\$!
for _ in \$(seq 600); do [ -f '$R/hup/last.ckpt' ] && break; sleep 0.05; done
kill -HUP \$p; wait \$p; echo "exit \$?"
grep -o '"state": *"[a-z]*"' '$R/hup/state.json'
HUP
measure "SIGHUP (a dropped SSH session) while training" '"state": *"stopped"' sh "$W/hup.sh"

# 8. The doctor's probe reads the current folder's files safely.
P=$W/probe-zero; mkdir -p "$P/venv" "$P/.venv" "$P/torch"
for f in venv/pyvenv.cfg .venv/pyvenv.cfg .python-version torch/version.py; do ln -s /dev/zero "$P/$f"; done
measure "venv, .python-version, torch/version.py linked to /dev/zero: doctor" "[Vv]erdict|[Rr]eady|GPU" sh -c "cd '$P' && '$G' doctor"
measure "the same folder: train --device auto" "epoch" sh -c "cd '$P' && '$G' train --data '$W/good' ${TINY[*]} --epochs 1 --device auto --name probezero"
PF=$W/probe-fifo; mkdir -p "$PF/.venv"; mkfifo "$PF/.python-version" "$PF/.venv/pyvenv.cfg"
measure "FIFO as .python-version and pyvenv.cfg: doctor" "[Vv]erdict|[Rr]eady|GPU" sh -c "cd '$PF' && '$G' doctor"
H=$W/hung; mkdir -p "$H/bin"
for tool in nvcc ldconfig; do
  printf '#!/bin/sh\nsleep 300 &\necho $! >%s/%s-grandchild.pid\necho $$ >%s/%s-child.pid\nsleep 300\n' "$H" "$tool" "$H" "$tool" >"$H/bin/$tool"
  chmod +x "$H/bin/$tool"
done
# (a zombie is not left running: where PID 1 does not reap, kill -0 still finds it)
measure "hung nvcc and ldconfig (with children) on PATH: doctor" "no probe process left" sh -c \
  "PATH='$H/bin':\$PATH '$G' doctor >/dev/null 2>&1; sleep 0.5; for f in '$H'/*.pid; do p=\$(cat \$f); [ -d /proc/\$p ] && ! grep -q ') Z ' /proc/\$p/stat && { echo \"left running: \$f\"; exit 1; }; done; echo 'no probe process left'"

# 9. Limits that bound what is really allocated.
GOAL=3072 measure "gzip IDX, 2 MB, header at the 2 GiB cap: lint" "images|more than|memory" "$G" lint "$W/idx-cap"
GOAL=3072 measure "gzip IDX, 2 MB, header at the 2 GiB cap: train" "images|more than|memory" "$G" train --data "$W/idx-cap" "${TINY[@]}" --image-size 0 --epochs 1 --name idxcap
GOAL=3072 measure "folder just under the 2 GiB cap at --image-size 256: train" "images|more than|memory" "$G" train --data "$W/folder-cap" "${TINY[@]}" --image-size 256 --epochs 1 --name foldercap
measure "COCO JSON of 22 million empty image objects (64 MiB): lint" "more than [0-9,]+ images|has no id" "$G" lint "$W/coco-empty/instances.json"
J=$W/progressive; cp -r "$W/good" "$J"; cp "$W/progressive.jpg" "$J/left/p1.jpg"; cp "$W/progressive.jpg" "$J/right/p2.jpg"
measure "progressive JPEG 7000x7000 (290 KB) x2: train" "a progressive JPEG of 7000x7000" "$G" train --data "$J" "${TINY[@]}" --epochs 1 --name progressive
measure "progressive JPEG 7000x7000: predict" "a progressive JPEG of 7000x7000" "$G" predict --model "$R/base/best" "$W/progressive.jpg"
T=$W/tiff; cp -r "$W/good" "$T"; cp "$W/deflate.tiff" "$T/left/t1.tiff"; cp "$W/deflate.tiff" "$T/right/t2.tiff"
measure "16-bit Deflate TIFF 7000x7000 (290 KB) x2: train" "a 16-bit TIFF of 7000x7000" "$G" train --data "$T" "${TINY[@]}" --epochs 1 --name tiff

# 10. The lint: bounded output, YOLO lists confined to the dataset, labels
# found by relative paths, every error counted.
# (in a folder whose whole path has no digit: a lint that grouped messages
# by their text up to the first digit made each link a kind of its own)
DG=$(mktemp -d /tmp/gpuwizard-dangling-XXXXXXXX)
while [[ $DG == *[0-9]* ]]; do rmdir "$DG"; DG=$(mktemp -d /tmp/gpuwizard-dangling-XXXXXXXX); done
bg_dirs+=("$DG"); mv "$W/dangling" "$DG/set"
measure "20,000 dangling links without digits: lint" "and [0-9,]+ more" "$G" lint "$DG/set"
Y2=$W/yolo-nc; mkdir -p "$Y2/images"; printf 'train: images\nval: images\nnc: 100000000\n' >"$Y2/data.yaml"
RC=1 measure "data.yaml nc: 100000000 without names: lint" "nc must be" "$G" lint "$Y2/data.yaml"
# yolo_set DIR: a YOLO set with one labelled image in images/train.
yolo_set() {
  mkdir -p "$1/images/train" "$1/labels/train"; cp "$W/good/left/000.png" "$1/images/train/a.png"
  echo "0 0.5 0.5 0.2 0.2" >"$1/labels/train/a.txt"
}
YL=$W/yolo-list; yolo_set "$YL"; mkdir -p "$W/outside"; cp "$W/good/left/001.png" "$W/outside/o.png"
printf 'images/train/a.png\n../outside/o.png\n%s\n/etc/passwd\n' "$W/outside/o.png" >"$YL/train.txt"
printf 'train: train.txt\nval: images/train\nnames: [a]\n' >"$YL/data.yaml"
RC=1 measure "YOLO list file naming files outside the dataset: lint" "outside" "$G" lint "$YL"
YB=$W/yolo-big; yolo_set "$YB"; truncate -s 500M "$YB/images/train/huge.jpg"
for _ in $(seq 40); do echo images/train/huge.jpg; done >"$YB/train.txt"
printf 'train: train.txt\nval: images/train\nnames: [a]\n' >"$YB/data.yaml"
measure "YOLO list naming one 500 MiB file 40 times: lint" "huge.jpg" "$G" lint "$YB"
YR=$W/yolo-repeat; yolo_set "$YR"; cp "$W/good/left/002.png" "$YR/images/train/b.png"; cp "$W/good/left/003.png" "$YR/images/train/c.png"
{ echo "train:"; for _ in $(seq 50000); do echo "  - images/train"; done; echo "val: images/train"; echo "names: [a]"; } >"$YR/data.yaml"
measure "data.yaml listing one folder 50,000 times: lint" "train +3 images" "$G" lint "$YR"
YU=$W/yolo-unreadable; yolo_set "$YU"; echo "not an image" >"$YU/images/train/a.png"; echo "nor this" >"$YU/images/train/b.jpg"
printf 'train: images/train\nval: images/train\nnames: [a]\n' >"$YU/data.yaml"
RC=1 measure "YOLO set whose images are all unreadable: lint" "none of the [0-9]+ images" "$G" lint "$YU"
YP=$W/yolo-rel; yolo_set "$YP"; echo "5 0.5 0.5 0.2 0.2" >"$YP/labels/train/a.txt"
printf 'train: images/train\nval: images/train\nnames: [a]\n' >"$YP/data.yaml"
RC=1 measure "YOLO lint by a relative path (lint .)" "class id 5" sh -c "cd '$YP' && '$G' lint ."

# 11. Names: escaped when shown, one a line in labels.txt; skipped class
# folders are named.
ES=$W/escapes; cp -r "$W/good" "$ES"; mv "$ES/left" "$ES/$(printf 'left\033[31mred')"; mv "$ES/right" "$ES/two
lines"
measure "class folders named with ESC and a newline: lint" "names escaped" sh -c \
  "'$G' lint '$ES' >'$W/esc.out' 2>&1; if grep -q \"\$(printf '\\033')\" '$W/esc.out'; then echo 'raw escape printed'; else echo 'names escaped'; fi"
measure "the same: train, labels.txt" "2 classes, 2 lines" sh -c \
  "'$G' train --data '$ES' ${TINY[*]} --epochs 1 --name escapes >/dev/null 2>&1; echo \"2 classes, \$(wc -l <'$R/escapes/labels.txt') lines\""
HC=$W/hidden; cp -r "$W/good" "$HC"; cp -r "$W/good/left" "$HC/.hidden"; mkdir -p "$W/elsewhere"; cp -r "$W/good/right" "$W/elsewhere/linked"
ln -s "$W/elsewhere/linked" "$HC/linked"
measure "a hidden class folder and one linked from outside: lint" "hidden folder skipped|folder skipped: .* leads to" "$G" lint "$HC"

# 12. The run index (the window lists CLI runs from it): a damaged or
# hostile index never stops a run, and is replaced.
mkdir -p "$W/cfg/gpuwizard"; IX=$W/cfg/gpuwizard/runs-index.json
TX=(env XDG_CONFIG_HOME="$W/cfg" "$G" train --data "$W/good" "${TINY[@]}" --epochs 1)
printf 'runs:\n- /tmp\n' >"$IX"
measure "run index not JSON: train" "Results in " "${TX[@]}" --name idx-json
rm -f "$IX"; mkfifo "$IX"
measure "run index is a named pipe: train" "Results in " "${TX[@]}" --name idx-fifo
rm -f "$IX"; ln -s /dev/zero "$IX"
measure "run index links to /dev/zero: train" "Results in " "${TX[@]}" --name idx-zero
rm -f "$IX"; head -c 10485760 /dev/zero | tr '\0' x >"$IX"
measure "run index of 10 MiB: train" "Results in " "${TX[@]}" --name idx-big
rm -f "$IX"; { printf '{"runs":['; for _ in $(seq 60000); do printf '"/",'; done; printf '"/"]}\n'; } >"$IX"
measure "run index of 60,001 entries: train" "Results in " "${TX[@]}" --name idx-many
rm -f "$IX"; mkdir "$IX"
measure "run index is a folder: train" "will not list this run" "${TX[@]}" --name idx-dir
rm -rf "$IX"

# 13. The command line as a newcomer uses it.
for c in doctor train predict lint bench watch; do
  RC=0 measure "gpuwizard $c --help" "[Ee]xample" "$G" "$c" --help
done
RC=2 measure "train --data /nope" "/nope" "$G" train --data /nope "${TINY[@]}"
printf 'epochs: [1\nbatch: 8\n' >"$W/bad.yaml"
RC=2 measure "train --config with a YAML error" "line [0-9]" "$G" train --config "$W/bad.yaml"
mkdir -p "$W/oldgo"; printf '#!/bin/sh\necho "go version go1.19.8 linux/amd64"\n' >"$W/oldgo/go"; chmod +x "$W/oldgo/go"
RC=2 measure "make deps with Debian 12's Go 1.19" "1\.26" env PATH="$W/oldgo:$PATH" make -s deps APT_PKGS=

# 14. Windows paths in data.yaml, and reports pasted from Windows (issue 20).
WY=$W/winyaml && mkdir -p "$WY/images/train"
printf 'path: C:\\datasets\\x\ntrain: images/train\nval: images/train\nnames: [shape]\n' >"$WY/data.yaml"
RC=1 measure "data.yaml path: C:\\datasets\\x on Linux: lint" "is a Windows path" "$G" lint "$WY/data.yaml"
printf 'path: "C:\\datasets\\x"\ntrain: images/train\nval: images/train\nnames: [shape]\n' >"$WY/quoted.yaml"
RC=1 measure "data.yaml Windows path in double quotes: lint" "single quotes" "$G" lint "$WY/quoted.yaml"
printf 'path: .\ntrain: \\\\nas\\share\\images\nval: images/train\nnames: [shape]\n' >"$WY/unc.yaml"
RC=1 measure "data.yaml train: a UNC share on Linux: lint" "is a Windows path" "$G" lint "$WY/unc.yaml"
measure "doctor --from a Windows DataLoader's WinError 1455" "WinError 1455" "$G" doctor --from gpu/paste/testdata/windows/dataloader_winerror_1455.txt
measure "doctor --from WinError 126 on c10.dll" "[Vv]isual C\+\+|VC\+\+|vc_redist|winget" "$G" doctor --from gpu/paste/testdata/windows/c10_winerror_126.txt

# 15. Prose that repeats the doctor's words on one long line (issue 25).
yes "my pc is I have Intel Iris Xe Graphics and my laptop is an xe graphics " | head -c 100000 | tr -d '\n' >"$W/prose100k.txt"
measure "doctor --from 100 KB of one line repeating the GPU words" "NVIDIA|GPU" "$G" doctor --from "$W/prose100k.txt"
yes "my pc is I have Intel Iris Xe Graphics and my laptop is an xe graphics " | head -c 8000000 | tr -d '\n' >"$W/prose8m.txt"
measure "doctor --from 8 MB of one line repeating the GPU words" "NVIDIA|GPU" "$G" doctor --from "$W/prose8m.txt"
# The openings a question check, a CUDA query's answer, the serverless,
# Compose and macOS-home words look for, repeated on one line of ~100 KB:
# each occurrence must cost little (a question check that read to the end
# of the line took 0.68 s on "how to " repeated).
for c in "question:how to " "query:x.is_available() " "lambda:lambda x: y " "compose:a-1 | " "users: /Users/a/"; do
  u=${c#*:}
  printf '%s' "$u" | awk -v n=$((100000 / ${#u})) '{ for (i = 0; i < n; i++) printf "%s", $0 }' >"$W/h_${c%%:*}.txt"
  measure "doctor --from 100 KB of '$u' on one line" "Diagnosis|GPU|report" "$G" doctor --from "$W/h_${c%%:*}.txt"
done

# 16. gpuwizard watch against hostile processes (issue 21). watch-one.sh G
# WAIT CMD...: start CMD, watch it once after WAIT s, end it by PID.
cat >"$W/watch-one.sh" <<'EOF'
G=$1 wait_s=$2; shift 2
"$@" & p=$!
sleep "$wait_s"
"$G" watch --once --window 5s "$p"; rc=$?
kill $(cat /proc/"$p"/task/*/children 2>/dev/null) "$p" 2>/dev/null; wait "$p" 2>/dev/null
exit $rc
EOF
RC=1 measure "watch: argv with ESC, a newline and U+202E" 'PID [0-9]+: \\x1b\[2J\\n' \
  bash "$W/watch-one.sh" "$G" 0.5 bash -c 'exec -a "$(printf "\033[2J\n\342\234\224 On the GPU\342\200\256")" sleep 30'
cat >"$W/big-argv.sh" <<'EOF'
A=$(head -c 127000 /dev/zero | tr '\0' a)
exec env BIG1=$A BIG2=$A LD_LIBRARY_PATH=$A CUDA_VISIBLE_DEVICES=$A python3 -c 'import time; time.sleep(60)' $A $A $A $A $A $A $A $A
EOF
RC=1 measure "watch: 1 MB command line, 0.5 MB environment" 'more bytes\)' bash "$W/watch-one.sh" "$G" 1 bash "$W/big-argv.sh"
truncate -s 500M "$W/libtorch_cuda.so"
cat >"$W/maps.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
fd = os.open(sys.argv[1], os.O_RDONLY)
n = 120000
a = libc.mmap(None, n * 4096, 1, 2, fd, 0)
for i in range(0, n, 2):
    libc.mprotect(a + i * 4096, 4096, 0)  # every other page a mapping of its own: 65,531 in all
time.sleep(60)
EOF
RC=1 measure "watch: a process with 65,531 mappings" "On the CPU|Setting up|Not a training|Idle" bash "$W/watch-one.sh" "$G" 5 python3 "$W/maps.py" "$W/libtorch_cuda.so"
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 20000 ]; then
  RC=1 measure "watch: a process with 20,000 open files" "On the CPU|Setting up|Not a training|Idle" \
    bash "$W/watch-one.sh" "$G" 2 bash -c 'ulimit -n 20000 && exec python3 -c "import os,time; fds=[os.open(\"/dev/null\",0) for _ in range(19900)]; time.sleep(60)"'
else
  echo "| watch: a process with 20,000 open files | not run: the hard limit on open files is $(ulimit -Hn) |||||"
fi
RC=1 measure "watch: a shell with 2,000 children" "the tree may hold more" \
  bash "$W/watch-one.sh" "$G" 8 bash -c 'for i in $(seq 2000); do sleep 60 & done; wait'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$W/evilbin" && chmod 755 "$W" "$W/evilbin"
  printf '#!/bin/sh\ntouch "%s/evil-ran.$$"\n' "$W" >"$W/evilbin/ldconfig"
  cp "$W/evilbin/ldconfig" "$W/evilbin/nvcc" && chmod 755 "$W/evilbin/ldconfig" "$W/evilbin/nvcc"
  measure "watch: root watching another user's process whose PATH holds nvcc and ldconfig" "programs of that user run: 0$" sh -c \
    "bash '$W/watch-one.sh' '$G' 1 env -i PATH='$W/evilbin:/usr/bin:/bin' setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c 'import time; time.sleep(30)' >/dev/null 2>&1; echo \"programs of that user run: \$(ls '$W' | grep -c '^evil-ran')\""
else
  echo "| watch: root watching another user's process | not run: needs root and setpriv |||||"
fi
cat >"$W/evenv.sh" <<'EOF'
V=$1 PYV=$(python3 -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')
S=$V/lib/$PYV/site-packages
mkdir -p "$V/bin" "$S/torch/lib" "$S/torch-2.5.1.dist-info"
ln -sf /usr/bin/python3 "$V/bin/python"
printf 'home = /usr/bin\ninclude-system-site-packages = false\n' > "$V/pyvenv.cfg"
ln -sf /dev/zero "$S/torch/version.py"; ln -sf /dev/zero "$S/torch/__init__.py"
[ -p "$S/torch-2.5.1.dist-info/METADATA" ] || mkfifo "$S/torch-2.5.1.dist-info/METADATA"
head -c 8192 /dev/urandom > "$S/torch/lib/libtorch_cuda.so"; cp "$S/torch/lib/libtorch_cuda.so" "$S/torch/lib/libc10.so"
exec env VIRTUAL_ENV="$V" "$V/bin/python" -c "import mmap, time
fs = [open('$S/torch/lib/' + n, 'rb') for n in ('libtorch_cuda.so', 'libc10.so')]
ms = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in fs]
time.sleep(60)"
EOF
RC=1 measure "watch: a venv with torch/version.py on /dev/zero and METADATA a FIFO" "python +$W/evenv/bin/python" \
  bash "$W/watch-one.sh" "$G" 2 bash "$W/evenv.sh" "$W/evenv"
RC=2 measure "watch: a zombie's PID" "no process [0-9]+" sh -c \
  "/usr/bin/python3 -c 'import os, time
p = os.fork()
p == 0 and os._exit(0)
print(p, flush=True); time.sleep(20)' > '$W/zombie.pid' & z=\$!; while [ ! -s '$W/zombie.pid' ]; do sleep 0.1; done; '$G' watch --once \"\$(cat '$W/zombie.pid')\"; rc=\$?; kill \$z; exit \$rc"
measure "watch -- a command that ignores SIGINT, SIGTERM and SIGHUP; SIGINT to watch" "ended after [0-9]+s with exit status 137" sh -c \
  "'$G' watch -- bash -c 'trap \"\" INT TERM HUP; sleep 60' & w=\$!; sleep 2; kill -INT \$w; wait \$w; echo \"watch's exit status: \$?\""
measure "watch --json -- yes: standard output holds only JSON" '^\{"time":' sh -c "timeout 8 '$G' watch --json -- yes 2>/dev/null | head -c 2000 | grep -v '^{' | head -c 1 | wc -c | grep -qx 0 && timeout 8 '$G' watch --json -- yes 2>/dev/null | head -1"
RC=2 measure "watch 99999999999999999999" "is not a process ID" "$G" watch 99999999999999999999
RC=127 measure "watch -- a command named with an escape sequence and a newline" 'cannot start \\x1b\[2Jevil\\nname' "$G" watch -- "$(printf '\033[2Jevil\nname')"

echo "RESULT bench=hostile-data cases=$n failed=$fails goal_rss_mib=$RSS_GOAL goal_s=$TIME_GOAL"
[ "$fails" = 0 ]
