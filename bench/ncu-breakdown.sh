#!/usr/bin/env bash
# Kernel time per training step on the GPU, ours against PyTorch eager,
# from Nsight Compute (ncu): every kernel of a run is timed
# (gpu__time_duration, under ncu's clock control), and each side runs
# twice, STEPS and 2·STEPS timed steps after the same warm-up, so that the
# difference is exactly STEPS steps (set-up, warm-up and graph capture
# cancel). Prints, per side, kernels and µs per step and the kernels that
# take the most time.
#   MODEL=lenet BATCH=256 STEPS=12 PY=python3 bench/ncu-breakdown.sh
#   EAGER=1 ...: ours without CUDA graphs (ncu times each kernel either way)
# Needs ncu on PATH (the CUDA toolkit's nsight-compute) and permission to
# read the GPU's counters (root, or NVreg_RestrictProfilingToAdminUsers=0).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-lenet}
BATCH=${BATCH:-256}
STEPS=${STEPS:-12}
WARMUP=${WARMUP:-3}
PY=${PY:-python3}
NCU=${NCU:-ncu}
REF=${REF:-../shared/bench/torch_reference.py}
[ -f "$REF" ] || REF=shared/bench/torch_reference.py
[ -f "$REF" ] || REF=bin/torch_reference.py
command -v "$NCU" >/dev/null || { echo "ncu not found (CUDA toolkit: nsight-compute); set NCU=" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prof() { # out.csv command...
  local out=$1; shift
  "$NCU" --csv --page raw --metrics gpu__time_duration.sum --graph-profiling node --target-processes all "$@" >"$out" 2>"$out.err" ||
    { cat "$out.err" >&2; exit 1; }
}
eager=()
[ -n "${EAGER:-}" ] && eager=(--eager)
for n in "$STEPS" $((2 * STEPS)); do
  prof "$work/ours$n.csv" bin/gpuwizard bench --device cuda --model "$MODEL" --batch "$BATCH" --warmup "$WARMUP" --steps "$n" "${eager[@]}"
  prof "$work/torch$n.csv" "$PY" "$REF" --device cuda --model "$MODEL" --bs "$BATCH" --warmup "$WARMUP" --steps "$n"
done
"$PY" - "$work" "$STEPS" "$MODEL" "$BATCH" <<'PYEOF'
import csv, sys
from collections import defaultdict

def kernels(path):
    """Per kernel name (up to its argument list): launches and µs."""
    rows = [r for r in csv.reader(open(path)) if r and not r[0].startswith("==")]
    head = rows[0]
    name, dur = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    scale = 1e-3  # ns → µs, unless the units row says otherwise
    by = defaultdict(lambda: [0, 0.0])
    for r in rows[1:]:
        v = r[dur].replace(",", "")
        try:
            d = float(v)
        except ValueError:
            scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}.get(v, scale)
            continue
        k = by[r[name].split("(")[0][:60]]
        k[0] += 1
        k[1] += d * scale
    return by

work, steps, model, bs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
for side, f in (("gpuwizard", "ours"), ("torch-eager", "torch")):
    a, b = kernels(f"{work}/{f}{steps}.csv"), kernels(f"{work}/{f}{2 * steps}.csv")
    diff = {n: (b[n][0] - a.get(n, [0, 0])[0], b[n][1] - a.get(n, [0, 0])[1]) for n in b}
    calls = sum(c for c, _ in diff.values())
    us = sum(d for _, d in diff.values())
    print(f"RESULT bench=ncu side={side} model={model} bs={bs} kernels_per_step={calls / steps:.1f} kernel_us_per_step={us / steps:.1f}")
    for n, (c, d) in sorted(diff.items(), key=lambda kv: -kv[1][1])[:10]:
        print(f"  {d / steps:8.1f} us/step {c / steps:6.1f} calls/step  {n}")
PYEOF
