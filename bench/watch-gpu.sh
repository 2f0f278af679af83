#!/usr/bin/env bash
# bench/watch-gpu.sh: the GPU check list of issue 21 for `gpuwizard watch`,
# as one script for a machine with an NVIDIA GPU (run as root, so that the
# other-user case can use setpriv). No Go, no internet: it needs
# bin/gpuwizard (make build here, then copy the tree) and a Python whose
# torch sees the GPU (PY, default python3). Every check prints
#   CHECK <name>: PASS|FAIL <what it saw>
# and keeps watch's JSON under OUT (default bench/out/watch-gpu); the summary
# line counts them. STAGES="1 4" runs some stages only. It takes about 7
# minutes; every process it starts is ended by its PID.
#
#  0. calibration: which GPU device files a CUDA process opens and maps,
#     and what NVML lists, after import torch, torch.cuda.is_available(),
#     torch.cuda.init(), the first tensor, and with CUDA_VISIBLE_DEVICES=""
#     (the device-file heuristics of containers, WSL 2 and "CUDA sees no
#     GPU" rest on this: record it)
#  1. a CUDA training (2 DataLoader workers) by PID: "gpu", its memory equal
#     to nvidia-smi --query-compute-apps; then one worker's PID: it leads to
#     the main process
#  2. import torch and sleep: "setting_up" (--once does not settle in 10s);
#     after the 60 s grace: "idle"
#  3. time.sleep(12) before the first CUDA tensor, watch --once -- CMD: the
#     verdict "gpu", settled, after the sleep
#  4. CUDA_VISIBLE_DEVICES "", -1, 7, a bogus UUID: through env and set
#     inside the script (os.environ, seen through CUDA opening no
#     /dev/nvidiaN): cause device_selection
#  5. a starved loader with 0 and 4 workers beside nvidia-smi dmon:
#     "gpu_starved"
#  6. torchrun with 2 ranks (both on GPU 0): "gpu", two ranks listed; a
#     rank's PID leads to torchrun
#  7. gpuwizard train --device cuda ("gpu") and --device cpu ("cpu")
#  8. another user's GPU training (setpriv --reuid=65534): watched by root
#     and by that user's neighbour (nobody watching root's): "gpu" from NVML
#  9. watch's own overhead (/usr/bin/time -v, 30 s live) and its time to the
#     first verdict
set -uo pipefail
cd "$(dirname "$0")/.."
GW=${GW:-$PWD/bin/gpuwizard}
PY=${PY:-python3}
OUT=${OUT:-$PWD/bench/out/watch-gpu}
STAGES=${STAGES:-"0 1 2 3 4 5 6 7 8 9"}
TMP=$(mktemp -d /tmp/watch-gpu.XXXXXX)
chmod 755 "$TMP"
mkdir -p "$OUT"
PIDS=()
PASS=0 FAIL=0

# tree PID: the PID and its descendants (from /proc/PID/task/*/children),
# children first: DataLoader workers and torchrun ranks end with it.
tree() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
  echo "$1"
}
end() { kill $(for p in "$@"; do tree "$p"; done) 2>/dev/null; }
cleanup() {
  local p
  end "${PIDS[@]}"
  sleep 1
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
die() { echo "watch-gpu: $*" >&2; exit 1; }
[ -x "$GW" ] || die "$GW is missing: make build (or GW=path/to/gpuwizard)"
"$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || die "$PY has no torch that sees a GPU (PY=...)"
command -v nvidia-smi >/dev/null || die "nvidia-smi is missing"
stage() { [[ " $STAGES " == *" $1 "* ]]; }

check() { # check NAME OK DETAIL
  if [ "$2" = 1 ]; then PASS=$((PASS + 1)); echo "CHECK $1: PASS $3"; else FAIL=$((FAIL + 1)); echo "CHECK $1: FAIL $3"; fi
}
# field FILE EXPR: a Python expression over the report r (the last JSON
# line of FILE), printed.
field() { "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
r = json.loads(lines[-1]) if lines else {}
try:
    print(eval(sys.argv[2], {"r": r}))
except Exception as e:
    print("?", e)
PYEOF
}
watch_once() { # watch_once NAME ARGS...: watch --once --json, saved as OUT/NAME.json
  local name=$1; shift
  timeout 300 "$GW" watch --once --json "$@" >"$OUT/$name.json" 2>"$OUT/$name.err"
  echo "  $name: $(field "$OUT/$name.json" 'r.get("state"), r.get("settled"), r.get("verdict")')"
}
start() { # start LOGNAME CMD...: start in the background, its PID in STARTED
  "$@" >"$TMP/$1.log" 2>&1 &
  STARTED=$!
  PIDS+=("$STARTED")
}
start_as() { local log=$1; shift; "$@" >"$TMP/$log.log" 2>&1 & STARTED=$!; PIDS+=("$STARTED"); }
wait_for() { # wait_for LOG TEXT: until the log holds TEXT (120 s)
  for _ in $(seq 1200); do grep -q "$2" "$TMP/$1.log" 2>/dev/null && return 0; sleep 0.1; done
  echo "  (waited in vain for '$2' in $1: $(tail -2 "$TMP/$1.log"))"; return 1
}
smi_mib() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$1" '$1 == p { print $2 }'; }

# The Python programs of the checks.
cp cli/testdata/watch/train_torch.py "$TMP/train.py"
cat >"$TMP/stages.py" <<'PYEOF'
import os, subprocess, sys, time
def show(stage):
    fds = sorted({os.readlink(f"/proc/self/fd/{f}") for f in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{f}")} )
    devs = [f for f in fds if f.startswith("/dev/nvidia") or f == "/dev/dxg"]
    maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/dev/" in l})
    smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"], capture_output=True, text=True).stdout.split()
    print(f"STAGE {stage}: pid {os.getpid()} open {devs} mapped {maps} nvml-lists-me {str(os.getpid()) + ',' in smi}", flush=True)
    time.sleep(1)
show("start")
import torch
show("import torch")
torch.cuda.is_available()
show("is_available")
torch.cuda.init()
show("cuda.init")
x = torch.ones(1, device="cuda")
show("first tensor")
PYEOF
cat >"$TMP/auto.py" <<'PYEOF'
import os, sys, time
if len(sys.argv) > 1:
    os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[1]
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
m = torch.nn.Linear(256, 256).to(device)
x = torch.randn(512, 256, device=device)
print("training on", device, flush=True)
t = time.time()
while time.time() - t < 20:
    m(x).sum().backward()
PYEOF
cat >"$TMP/late.py" <<'PYEOF'
import time, torch
time.sleep(12)
m = torch.nn.Linear(1024, 1024).cuda()
x = torch.randn(1024, 1024, device="cuda")
t = time.time()
while time.time() - t < 15:
    m(x).sum().backward()
PYEOF
cat >"$TMP/starved.py" <<'PYEOF'
import sys, time, numpy as np, torch
from torch.utils.data import DataLoader, Dataset
class Heavy(Dataset):
    def __len__(self): return 10**6
    def __getitem__(self, i):
        a = np.random.rand(96, 96)
        for _ in range(6):
            a = np.abs(np.fft.ifft2(np.fft.fft2(a)))  # CPU work per sample
        return torch.tensor(a, dtype=torch.float32).flatten()[:256], i % 10
m = torch.nn.Linear(256, 10).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
print("training on cuda", flush=True)
t = time.time()
for x, y in DataLoader(Heavy(), batch_size=64, num_workers=int(sys.argv[1])):
    x, y = x.cuda(), y.cuda()
    opt.zero_grad(); torch.nn.functional.cross_entropy(m(x), y).backward(); opt.step()
    if time.time() - t > 40: break
PYEOF
cat >"$TMP/rank.py" <<'PYEOF'
import os, time, torch
m = torch.nn.Linear(1024, 1024).to("cuda:0")
x = torch.randn(512, 1024, device="cuda:0")
print("rank", os.environ.get("RANK"), "training", flush=True)
t = time.time()
while time.time() - t < 40:
    m(x).sum().backward()
PYEOF
chmod 644 "$TMP"/*.py
echo "gpuwizard: $("$GW" version 2>/dev/null | head -1); $PY: $("$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))')"
nvidia-smi --query-gpu=index,name,driver_version,memory.used,memory.total,mig.mode.current --format=csv

if stage 0; then
  echo "== 0. calibration: device files and NVML by stage"
  "$PY" "$TMP/stages.py" | tee "$OUT/calibration.txt"
  CUDA_VISIBLE_DEVICES= "$PY" "$TMP/stages.py" 2>&1 | sed 's/^/CVD="": /' | tee -a "$OUT/calibration.txt"
fi

if stage 1; then
  echo "== 1. a CUDA training with 2 workers, by PID; then a worker's PID"
  start train1 "$PY" "$TMP/train.py" --device cuda --seconds 90 --workers 2; T=$STARTED
  wait_for train1 "training on" && sleep 3
  watch_once pid "$T"
  mib=$(smi_mib "$T")
  got=$(field "$OUT/pid.json" 'r["gpus"][0]["process_mib"] if r.get("gpus") else None')
  check pid_on_gpu "$([ "$(field "$OUT/pid.json" 'r.get("state")')" = gpu ] && echo 1)" "state $(field "$OUT/pid.json" 'r.get("state")')"
  check pid_memory "$([ -n "$mib" ] && [ "$got" = "$mib" ] && echo 1)" "watch $got MiB, nvidia-smi ${mib:-none} MiB"
  W=$(pgrep -P "$T" | head -1)
  watch_once worker "$W"
  check worker_leads_to_main "$([ "$(field "$OUT/worker.json" 'r.get("pid"), r.get("asked_pid"), r.get("state")')" = "($T, $W, 'gpu')" ] && echo 1)" "$(field "$OUT/worker.json" 'r.get("pid"), r.get("asked_pid"), r.get("state")')"
  end "$T"
fi

if stage 2; then
  echo "== 2. import torch and sleep"
  start sleeper "$PY" -c 'import torch, time; print("imported", flush=True); time.sleep(100)'; S=$STARTED
  wait_for sleeper imported
  watch_once young --window 10s "$S"
  check young_setting_up "$([ "$(field "$OUT/young.json" 'r.get("state"), r.get("settled")')" = "('setting_up', False)" ] && echo 1)" "$(field "$OUT/young.json" 'r.get("state"), r.get("settled")')"
  sleep 55
  watch_once old "$S"
  check old_idle "$([ "$(field "$OUT/old.json" 'r.get("state")')" = idle ] && echo 1)" "$(field "$OUT/old.json" 'r.get("verdict")')"
  end "$S"
fi

if stage 3; then
  echo "== 3. time.sleep(12) before the first CUDA tensor, --once -- CMD"
  watch_once late -- "$PY" "$TMP/late.py"
  check late_on_gpu "$([ "$(field "$OUT/late.json" 'r.get("state"), r.get("settled"), r.get("elapsed_s", 0) >= 12')" = "('gpu', True, True)" ] && echo 1)" "$(field "$OUT/late.json" 'r.get("state"), r.get("settled"), r.get("elapsed_s")')"
fi

if stage 4; then
  echo "== 4. CUDA_VISIBLE_DEVICES through env and inside the script"
  i=0
  for v in "" -1 7 GPU-00000000-0000-0000-0000-000000000000; do
    i=$((i + 1))
    watch_once "cvd_env$i" -- env CUDA_VISIBLE_DEVICES="$v" "$PY" "$TMP/auto.py"
    check "cvd_env_'$v'" "$([ "$(field "$OUT/cvd_env$i.json" 'r.get("state"), r.get("cause")')" = "('cpu', 'device_selection')" ] && echo 1)" "$(field "$OUT/cvd_env$i.json" 'r.get("verdict")')"
    watch_once "cvd_script$i" -- "$PY" "$TMP/auto.py" "$v"
    check "cvd_script_'$v'" "$([ "$(field "$OUT/cvd_script$i.json" 'r.get("state"), r.get("cause")')" = "('cpu', 'device_selection')" ] && echo 1)" "$(field "$OUT/cvd_script$i.json" 'r.get("verdict"), r.get("devices")')"
  done
fi

if stage 5; then
  echo "== 5. a starved loader, 0 and 4 workers, beside nvidia-smi dmon"
  for n in 0 4; do
    start "starved$n" "$PY" "$TMP/starved.py" "$n"; P=$STARTED
    wait_for "starved$n" "training on" && sleep 4
    timeout 15 nvidia-smi dmon -s u -c 10 >"$OUT/dmon$n.txt" 2>&1 &
    D=$!
    watch_once "starved$n" "$P"
    wait "$D"
    sm=$(awk '$1 ~ /^[0-9]+$/ { s += $2; n++ } END { if (n) printf "%.0f", s / n }' "$OUT/dmon$n.txt")
    check "starved_${n}_workers" "$([ "$(field "$OUT/starved$n.json" 'r.get("state")')" = gpu_starved ] && echo 1)" "dmon sm ${sm:-?} %; $(field "$OUT/starved$n.json" 'r.get("verdict")')"
    end "$P"
  done
fi

if stage 6; then
  echo "== 6. torchrun with 2 ranks on GPU 0"
  start torchrun "$PY" -m torch.distributed.run --nproc-per-node=2 "$TMP/rank.py"; R=$STARTED
  wait_for torchrun "rank 1 training" && wait_for torchrun "rank 0 training" && sleep 3
  watch_once torchrun "$R"
  check torchrun_ranks "$([ "$(field "$OUT/torchrun.json" 'r.get("state"), sorted(p["role"] for p in r.get("processes", []) if p["role"].startswith("rank"))')" = "('gpu', ['rank 0', 'rank 1'])" ] && echo 1)" "$(field "$OUT/torchrun.json" 'r.get("verdict")')"
  K=$(pgrep -f "$TMP/rank.py" | while read -r p; do [ "$p" != "$R" ] && grep -qz '^RANK=' "/proc/$p/environ" 2>/dev/null && echo "$p"; done | head -1)
  [ -z "$K" ] && K=$(pgrep -P "$R" | head -1)
  watch_once rank "$K"
  check rank_leads_to_torchrun "$([ "$(field "$OUT/rank.json" 'r.get("pid")')" = "$R" ] && echo 1)" "$(field "$OUT/rank.json" 'r.get("pid"), r.get("asked_pid"), r.get("state")')"
  end "$R"
fi

if stage 7; then
  echo "== 7. gpuwizard train --device cuda and --device cpu"
  watch_once train_cuda -- "$GW" train --device cuda --epochs 3 --project "$TMP/runs"
  check train_cuda "$([ "$(field "$OUT/train_cuda.json" 'r.get("state")')" = gpu ] && echo 1)" "$(field "$OUT/train_cuda.json" 'r.get("verdict")')"
  watch_once train_cpu -- "$GW" train --device cpu --epochs 3 --project "$TMP/runs"
  check train_cpu "$([ "$(field "$OUT/train_cpu.json" 'r.get("state"), r.get("cause")')" = "('cpu', 'device_selection')" ] && echo 1)" "$(field "$OUT/train_cpu.json" 'r.get("verdict")')"
fi

if stage 8; then
  echo "== 8. another user's GPU process"
  start_as nobody setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$TMP/train.py" --device cuda --seconds 60; N=$STARTED
  start rootrun "$PY" "$TMP/train.py" --device cuda --seconds 60; O=$STARTED
  wait_for nobody "training on" && wait_for rootrun "training on" && sleep 3
  NP=$(pgrep -u 65534 -f "$TMP/train.py" | head -1)
  watch_once other_by_root "${NP:-$N}"
  check other_by_root "$([ "$(field "$OUT/other_by_root.json" 'r.get("state")')" = gpu ] && echo 1)" "$(field "$OUT/other_by_root.json" 'r.get("verdict")')"
  timeout 120 setpriv --reuid=65534 --regid=65534 --clear-groups "$GW" watch --once --json "$O" >"$OUT/root_by_nobody.json" 2>"$OUT/root_by_nobody.err"
  check root_by_nobody "$([ "$(field "$OUT/root_by_nobody.json" 'r.get("state"), r.get("on_gpu")')" = "('gpu', True)" ] && echo 1)" "$(field "$OUT/root_by_nobody.json" 'r.get("verdict")')"
  end "$N" "$O"
fi

if stage 9; then
  echo "== 9. watch's own cost and its time to the first verdict"
  start train9 "$PY" "$TMP/train.py" --device cuda --seconds 80 --workers 2; T=$STARTED
  wait_for train9 "training on" && sleep 2
  t0=$(date +%s.%N); "$GW" watch --once "$T" >/dev/null 2>&1; t1=$(date +%s.%N)
  echo "RESULT first_verdict_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') processes=$(ls -d /proc/[0-9]* | wc -l)"
  /usr/bin/time -v timeout -s INT 30 "$GW" watch --interval 5s "$T" >/dev/null 2>"$OUT/time.txt"
  awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {r=$2} END { printf "RESULT overhead_cpu_pct=%.2f max_rss_mib=%d\n", (u + s) / 30 * 100, r / 1024 }' "$OUT/time.txt"
  end "$T"
fi

echo "watch-gpu: $PASS passed, $FAIL failed (JSON and logs in $OUT)"
[ "$FAIL" -eq 0 ]
