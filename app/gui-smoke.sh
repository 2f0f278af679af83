#!/usr/bin/env bash
# GUI smoke test: the real window in a virtual 1280×800 X display, driven
# with xdotool as a new user would: Check (and its Watch tab), Dataset (a
# folder of 10 Fashion-MNIST classes with long names, typed into the path
# entry), Settings, Train, Stop after an epoch, Results of the stopped run,
# Runs, Resume, Stop; then the Settings crumb, new settings (the Train step
# ready for them), and the Delete dialog answered with Space (its focused
# button is Cancel: the run stays). One screenshot per step in
# dist/screenshots/ (the Runs view's
# file has "runs" in its name); after each step the window must still be at
# most 1280 px wide. Reports how long the window took to appear, and the
# window's peak memory (VmHWM) while training the CNN on 3,000 48×48 colour
# images (GUI_SMOKE_RSS=0 skips that part). Run with: make gui-smoke
set -euo pipefail
cd "$(dirname "$0")/.."
out=dist/screenshots
mkdir -p "$out"
rm -f "$out"/*.png "$out/gui.log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LANG=en_US.UTF-8
gui=${GUI:-./bin/gpuwizard-gui}

echo "gui-smoke: making the datasets (tools/mkdataset)"
go run ./tools/mkdataset -out "$work/fashion28" -n 1500 -size 28 -long >/dev/null
if [ "${GUI_SMOKE_RSS:-1}" != 0 ]; then
  go run ./tools/mkdataset -out "$work/fashion48" -n 3000 -size 48 -rgb -long >/dev/null
fi

export out work gui
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -euo pipefail
  fail() { echo "gui-smoke: $*" >&2; exit 1; }
  # The window is 1100×720 at the top left (no window manager); the
  # coordinates below are in the window.
  next=(1058 698); runs=(1058 22)
  start_window() { # $1: HOME
    local t0; t0=$(date +%s%N)
    HOME="$1" "$gui" 2>>"$out/gui.log" & pid=$!
    wid=$(timeout 30 xdotool search --sync --name "^gpuwizard$" | head -1)
    shown=$(( ($(date +%s%N) - t0) / 1000000 ))
  }
  click() { xdotool mousemove --window "$wid" "$1" "$2" click 1; sleep "${3:-1}"; }
  width() { xdotool getwindowgeometry "$wid" | sed -n "s/.*Geometry: \([0-9]*\)x.*/\1/p"; }
  shot() {
    import -window "$wid" "$out/$1.png"
    local w; w=$(width)
    echo "$(date +%T) screenshot $out/$1.png (window ${w} px wide)"
    [ "$w" -le 1280 ] || fail "$1: the window grew to $w px, wider than the 1280 px screen"
  }
  type_into() { # x y text: replace an entry'"'"'s text
    click "$1" "$2" 0.3
    xdotool key --window "$wid" ctrl+a; xdotool type --window "$wid" --delay 20 "$3"; sleep 0.5
  }

  home=$work/home; mkdir -p "$home"
  start_window "$home"
  echo "RESULT bench=window-appears ms=$shown goal_ms=1000"
  sleep 3; shot 1-check
  click 250 66 4                      # the tab "Watch a running training"
  shot 1-watch
  click 70 66 1                       # back to "This machine"
  click "${next[@]}" 2
  type_into 800 106 "$work/fashion28"; xdotool key --window "$wid" Return; sleep 4
  shot 2-dataset
  click "${next[@]}" 1
  type_into 400 223 105               # Epochs: 105, so that Stop comes first (the axis ends at 105)
  sleep 4; shot 3-settings
  click "${next[@]}" 1
  click 880 106 4                     # Start training
  shot 4-train
  click 985 106 1                     # Pause: no speed, no time left
  shot 4-paused
  click 985 106 1                     # Resume
  click 1060 106 4                    # Stop (a resumable checkpoint)
  shot 5-stopped
  click "${next[@]}" 6                # Results of the stopped run
  shot 6-results
  xdotool mousemove --window "$wid" 700 400 click --repeat 8 5; sleep 1   # scroll to the matrix
  shot 6-results-matrix
  xdotool mousemove --window "$wid" 700 400 click --repeat 40 5; sleep 1  # and to the samples
  shot 6-results-samples
  click "${runs[@]}" 3
  click 60 181 1                      # the newest run
  shot 7-runs
  click 185 652 5                     # Resume
  shot 8-resumed
  click 1060 106 4                    # Stop again
  click 248 22 2                      # the crumb "3 Settings"
  type_into 400 223 12                # new settings
  click "${next[@]}" 2                # the Train step, ready for them
  shot 9-train-reset
  click "${runs[@]}" 3
  click 60 181 1                      # the run
  click 632 652 2                     # Delete…
  shot 10-delete-dialog
  xdotool key --window "$wid" space; sleep 1   # Space answers the focused button: Cancel
  shot 10-delete-cancelled
  if grep -q "Preferences load error" "$out/gui.log"; then fail "Fyne logged a preferences load error"; fi
  kill $pid; wait $pid 2>/dev/null || true
  if grep -q "Preferences load error" "$out/gui.log"; then
    echo "gui-smoke: note: Fyne logged a preferences load error while quitting (its save at exit races its own file watcher)"
  fi
  ls "$home"/gpuwizard/runs/*/best.ckpt >/dev/null 2>&1 || fail "no trained model in ~/gpuwizard/runs"

  if [ -d "$work/fashion48" ]; then
    home=$work/home48; mkdir -p "$home"
    start_window "$home"
    sleep 3; click "${next[@]}" 2
    type_into 800 106 "$work/fashion48"; xdotool key --window "$wid" Return; sleep 6
    click "${next[@]}" 2
    click "${next[@]}" 1
    click 880 106 45                    # train the CNN for 45 s
    shot 11-rss-cnn48
    hwm=$(awk "/VmHWM/ {print \$2}" /proc/$pid/status)
    rss=$(awk "/VmRSS/ {print \$2}" /proc/$pid/status)
    echo "RESULT bench=gui-rss-training-cnn48 peak_mib=$((hwm / 1024)) now_mib=$((rss / 1024)) goal_mib=600"
    click 1060 106 4
    kill $pid; wait $pid 2>/dev/null || true
  fi
  echo "gui-smoke: Check, Watch, Dataset, Settings, Train, Stop, Results, Runs, Resume, the crumbs and the Delete dialog (Cancel) went through the window"
'
