#!/usr/bin/env bash
# Quick check speed: `gpuwizard doctor` (no --deep) against PyTorch's
# `python -m torch.utils.collect_env`, run interleaved (A B A B ...) on the
# same machine, medians reported, with the ratio.
#   N=20 PY=/usr/bin/python3 bench/doctor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-15}
PY=${PY:-/usr/bin/python3}
[ -x bin/gpuwizard ] || make build >/dev/null
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "$PY has no torch: install it (Debian: apt-get install python3-torch) or set PY=" >&2
  exit 2
fi
ms() { echo $(( $(date +%s%N) / 1000000 )); }
ours=(); theirs=()
bin/gpuwizard doctor --json >/dev/null || true          # warm the file cache
"$PY" -m torch.utils.collect_env >/dev/null 2>&1 || true
for _ in $(seq "$N"); do
  s=$(ms); bin/gpuwizard doctor --json >/dev/null || true; e=$(ms); ours+=($((e - s)))
  s=$(ms); "$PY" -m torch.utils.collect_env >/dev/null 2>&1 || true; e=$(ms); theirs+=($((e - s)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a=$(median "${ours[@]}"); b=$(median "${theirs[@]}")
echo "RESULT bench=doctor runs=$N gpuwizard_doctor_ms=$a collect_env_ms=$b ratio=$(awk "BEGIN { printf \"%.3f\", $a / $b }") speedup=$(awk "BEGIN { printf \"%.1f\", $b / $a }")x"

# doctor --from on a 100 KB paste (parse and judge), budget 50 ms.
ns=$(go test -tags migrated_fynedo -run '^$' -bench From100KB -benchtime 20x ./gpu/doctor | awk '/^BenchmarkFrom100KB/ {print $3}')
echo "RESULT bench=doctor-from-100KB ms=$(awk "BEGIN { printf \"%.1f\", $ns / 1e6 }") budget_ms=50"
