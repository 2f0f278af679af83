#!/usr/bin/env bash
# make dist (Windows part): dist/gpuwizard-VERSION-windows-amd64.zip with
# gpuwizard.exe (console: every command) and gpuwizard-gui.exe (the window,
# GUI subsystem), both cross-compiled here with mingw, stripped, with the
# application icon and version information; README.md, a short
# README-Windows.txt, the attribution of the embedded data and the licences
# of the Go modules linked in. Nothing is installed on the Windows side.
# It checks each .exe's subsystem and that its resources are there.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=${TAGS:-migrated_fynedo}
OBJDUMP=${OBJDUMP:-x86_64-w64-mingw32-objdump}
export CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=${CC_WINDOWS:-x86_64-w64-mingw32-gcc}

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
name=gpuwizard-$version-windows-amd64
stage=dist/$name
rm -rf "$stage" && mkdir -p "$stage/licenses"
trap 'rm -f rsrc_windows_amd64.syso cmd/gpuwizard-gui/rsrc_windows_amd64.syso' EXIT
GOOS= GOARCH= CGO_ENABLED= CC= tools/winres.sh

echo "dist: building $name"
"$GO" build -buildvcs=auto -trimpath -tags "$TAGS" -ldflags='-s -w' -o "$stage/gpuwizard.exe" .
"$GO" list -tags "$TAGS" -f '{{.Stale}}' github.com/go-gl/gl/v2.1/gl 2>/dev/null | grep -qx true &&
  echo "dist: compiling the window's OpenGL bindings with mingw (first build only; about 10 minutes)..."
CGO_LDFLAGS=-lssp "$GO" build -buildvcs=auto -trimpath -tags "$TAGS" -ldflags='-s -w -H=windowsgui' -o "$stage/gpuwizard-gui.exe" ./cmd/gpuwizard-gui

# Each program: its subsystem (3 console, 2 GUI) and a resource section
# (icon and version information).
check() {
  local exe=$1 subsystem=$2 headers sections
  headers=$("$OBJDUMP" -p "$exe") && sections=$("$OBJDUMP" -h "$exe") || { echo "dist: FAIL: $OBJDUMP cannot read $exe" >&2; exit 1; }
  grep -q "^Subsystem[[:space:]]*0000000$subsystem" <<<"$headers" ||
    { echo "dist: FAIL: $exe is not subsystem $subsystem" >&2; exit 1; }
  grep -q '\.rsrc' <<<"$sections" || { echo "dist: FAIL: $exe has no resources (icon, version)" >&2; exit 1; }
}
check "$stage/gpuwizard.exe" 3
check "$stage/gpuwizard-gui.exe" 2
echo "dist: gpuwizard.exe (console) and gpuwizard-gui.exe (GUI), each with its icon and version"

cp README.md "$stage/"
cp assets/mnist/NOTICE.md "$stage/licenses/built-in-dataset-MNIST.md"
"$GO" list -deps -tags "$TAGS" -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}' . ./cmd/gpuwizard-gui | sort -u |
while read -r mod dir; do
  for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/NOTICE*; do
    [ -f "$f" ] || continue
    out="$stage/licenses/$(echo "$mod" | tr '/' '_')-$(basename "$f")"
    cp "$f" "$out" && chmod 644 "$out"
  done
done
# Windows' Notepad wants CRLF line ends.
sed 's/$/\r/' >"$stage/README-Windows.txt" <<'TXT'
gpuwizard for Windows 10 and 11 (64-bit)

Nothing to install: keep this folder anywhere (Downloads, Desktop).

  gpuwizard-gui.exe   double-click it: the window (check the machine, train, results)
  gpuwizard.exe       the same engine in PowerShell or cmd:

    .\gpuwizard.exe doctor              why training does not use the NVIDIA GPU, and the fix
    .\gpuwizard.exe doctor --markdown   the same, to paste into an issue or a forum post
    .\gpuwizard.exe watch PID           where a running training really runs (GPU or CPU)
    .\gpuwizard.exe train               train on the built-in dataset (or --data FOLDER)
    .\gpuwizard.exe help                every command

Windows SmartScreen may warn about an unknown publisher the first time:
"More info", then "Run anyway". The NVIDIA driver's nvml.dll and nvcuda.dll are
used when present (System32, or C:\Program Files\NVIDIA Corporation\NVSMI); without
a driver the doctor says so and training runs on the CPU.

README.md has the whole manual; licenses\ the licences of what is inside.
TXT
rm -f "dist/$name.zip"
(cd dist && python3 -m zipfile -c "$name.zip" "$name/")
rm -rf "$stage"
ls -l "dist/$name.zip"
