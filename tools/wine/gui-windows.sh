#!/usr/bin/env bash
# make gui-smoke-windows: bin/gpuwizard-gui.exe (make build-windows) started
# under Wine on Xvfb at 1280x800, in the Wine prefix of make test-windows;
# waits for its window, lets it draw the Check step, saves a screenshot in
# dist/screenshots/windows-1-check.png and fails when no window appears or
# the screenshot is one flat colour (nothing drawn). Also runs
# gpuwizard.exe doctor once under Wine and prints its wall time.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=$(mkdir -p "${WINE_OUT:-build/wine}" && cd "${WINE_OUT:-build/wine}" && pwd)
CC=x86_64-w64-mingw32-gcc
export WINEPREFIX="$OUT/prefix" WINEDEBUG=-all WINEARCH=win64 WINEDLLOVERRIDES="mscoree,mshtml="
source tools/wine/lib.sh
for tool in xvfb-run xdotool import; do
  command -v "$tool" >/dev/null || die "$tool is missing: make gui-smoke-windows installs xvfb, xdotool and imagemagick"
done
[ -f bin/gpuwizard-gui.exe ] && [ -f bin/gpuwizard.exe ] || die "bin/gpuwizard-gui.exe is missing: run make build-windows"
prefix
shots=dist/screenshots && mkdir -p "$shots"
shot=$shots/windows-1-check.png
rm -f "$shot"

# doctor under Wine (no GPU, no NVIDIA driver in the prefix): its wall time.
start=$(date +%s.%N)
timeout 120 wine bin/gpuwizard.exe doctor >"$OUT/doctor.log" 2>&1
rc=$?
echo "gui-windows: gpuwizard.exe doctor under Wine: exit $rc in $(echo "$(date +%s.%N) - $start" | bc) s; its verdict: $(grep -m1 -E 'Ready|Not ready' "$OUT/doctor.log")"

# The window.
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  wine bin/gpuwizard-gui.exe >"'"$OUT"'/gui.log" 2>&1 & pid=$!
  wid=$(timeout 120 xdotool search --sync --onlyvisible --name "^gpuwizard" | head -1)
  [ -n "$wid" ] || { echo "gui-windows: no window appeared within 120 s" >&2; kill $pid; wineserver -k; exit 1; }
  sleep 10 # the Check step probes the machine, then draws its verdict
  xdotool getwindowgeometry "$wid"
  import -window "$wid" "'"$shot"'"
  kill $pid; wineserver -k; wait $pid 2>/dev/null
  exit 0' || die "the window did not come up: see $OUT/gui.log"
[ -s "$shot" ] || die "no screenshot"
sd=$(convert "$shot" -format '%[fx:standard_deviation]' info:)
awk -v s="$sd" 'BEGIN { exit !(s > 0.02) }' || die "the screenshot is one flat colour (standard deviation $sd): nothing was drawn"
echo "gui-windows: the window drew the Check step under Wine: $shot (standard deviation $sd)"
