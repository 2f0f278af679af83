#!/usr/bin/env bash
# bench/watch-overhead.sh: what `gpuwizard watch` costs and how fast it
# answers, on this machine (no GPU needed).
#
#  1. Time to the first verdict: `watch --once PID` of a running CPU torch
#     training (cli/testdata/watch/train_torch.py with 2 DataLoader workers,
#     through /usr/bin/python3 and Debian's python3-torch), and
#     `watch --once --json -- python3 train_torch.py` (torch's import
#     included) until its first JSON line.
#  2. watch's own CPU (user + system time over the wall time, % of one core)
#     and memory (maximum resident set, /usr/bin/time -v) while it watches
#     that training live (--interval 5s, the default) for SECONDS_PER_RUN,
#     with 100 and with 1,500 idle processes (sleep) on the machine.
#
# Usage: bench/watch-overhead.sh [BINARY...]   (default: bin/gpuwizard)
# Give several binaries (an older build first) to compare them in the same
# run. Environment: COUNTS (default "100 1500"), SECONDS_PER_RUN (30),
# PY (/usr/bin/python3). Every process it starts is ended by its PID.
set -uo pipefail
cd "$(dirname "$0")/.."
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=(bin/gpuwizard)
COUNTS=${COUNTS:-"100 1500"}
SECS=${SECONDS_PER_RUN:-30}
PY=${PY:-/usr/bin/python3}
SCRIPT=cli/testdata/watch/train_torch.py
TMP=$(mktemp -d)
PIDS=()

# tree PID: the PID and its descendants (from /proc/PID/task/*/children),
# children first.
tree() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
  echo "$1"
}
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill $(tree "$p") 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

die() { echo "watch-overhead: $*" >&2; exit 1; }
for b in "${BINS[@]}"; do [ -x "$b" ] || die "$b is not an executable (make build, or go build -tags migrated_fynedo -o bin/gpuwizard .)"; done
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian: apt-get install time)"
"$PY" -c 'import torch' 2>/dev/null || die "$PY cannot import torch (Debian: apt-get install python3-torch)"

# The training watched: it runs for the whole bench.
"$PY" "$SCRIPT" --seconds 3600 --workers 2 >"$TMP/train.out" 2>&1 &
TRAIN=$!
PIDS+=("$TRAIN")
for _ in $(seq 600); do grep -q '^training on' "$TMP/train.out" && break; sleep 0.1; done
grep -q '^training on' "$TMP/train.out" || die "the training did not start: $(tail -3 "$TMP/train.out")"
echo "training: PID $TRAIN ($PY $SCRIPT --workers 2), $(nproc) cores"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo
echo "== time to the first verdict (median of 3)"
for b in "${BINS[@]}"; do
  ts=()
  for _ in 1 2 3; do
    t0=$(now); "$b" watch --once "$TRAIN" >/dev/null 2>&1; ts+=("$(secs "$t0" "$(now)")")
  done
  echo "$b watch --once PID: $(printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p) s (runs: ${ts[*]})"
  t0=$(now)
  first=""
  while IFS= read -r line; do
    case $line in "{"*) first=$(secs "$t0" "$(now)"); break ;; esac
  done < <("$b" watch --once --json -- "$PY" "$SCRIPT" --seconds 8 2>/dev/null)
  echo "$b watch --once --json -- python3 train_torch.py: first JSON line after ${first:-none} s"
  wait "$!" 2>/dev/null # the watch, which waits for its command to end
done

spawn() { # spawn N: N idle processes
  local i
  for i in $(seq "$1"); do sleep 3600 & PIDS+=("$!"); SLEEPS+=("$!"); done
}
unspawn() {
  local p
  for p in "${SLEEPS[@]}"; do kill "$p" 2>/dev/null; done
  wait "${SLEEPS[@]}" 2>/dev/null
  SLEEPS=()
}

echo
echo "== watch's own cost while it watches the training live for ${SECS}s (--interval 5s)"
printf '%-28s %10s %12s %10s %12s\n' binary processes "cpu (% core)" "max RSS" "cpu seconds"
for n in $COUNTS; do
  SLEEPS=()
  spawn "$n"
  total=$(ls -d /proc/[0-9]* | wc -l)
  for b in "${BINS[@]}"; do
    /usr/bin/time -v timeout -s INT "$SECS" "$b" watch --interval 5s "$TRAIN" >/dev/null 2>"$TMP/time.err"
    u=$(awk -F': ' '/User time/ {print $2}' "$TMP/time.err")
    s=$(awk -F': ' '/System time/ {print $2}' "$TMP/time.err")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$TMP/time.err")
    printf '%-28s %10s %12s %10s %12s\n' "$b" "$total" "$(awk -v u="$u" -v s="$s" -v w="$SECS" 'BEGIN { printf "%.2f", (u + s) / w * 100 }')" "$((rss / 1024)) MiB" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')"
  done
  unspawn
done
