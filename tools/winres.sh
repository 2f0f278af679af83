#!/usr/bin/env bash
# Writes the Windows resources (icon and version information) of both
# programs as .syso files beside their main packages (rsrc_windows_amd64.syso
# in . and in cmd/gpuwizard-gui; git ignores them), which `go build` links
# into gpuwizard.exe and gpuwizard-gui.exe. Needs mingw's windres.
#   tools/winres.sh             # version from FyneApp.toml and git
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
WINDRES=${WINDRES:-x86_64-w64-mingw32-windres}
command -v "$WINDRES" >/dev/null || { echo "winres: $WINDRES is missing (make deps-windows installs gcc-mingw-w64-x86-64)" >&2; exit 1; }
base=$(sed -n 's/^ *Version *= *"\([0-9.]*\)".*/\1/p' FyneApp.toml | head -1)
builds=$(git rev-list --count HEAD 2>/dev/null || echo 0)
product=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
out=build/winres
"$GO" run ./tools/winres -icon assets/icon.png -out "$out" -version "${base:-0.0.0}.$((builds % 65536))" -product-version "$product"
for p in gpuwizard:. gpuwizard-gui:cmd/gpuwizard-gui; do
  prog=${p%%:*} dir=${p#*:}
  (cd "$out" && "$WINDRES" -O coff -i "$prog.rc" -o "$prog.syso")
  cp "$out/$prog.syso" "$dir/rsrc_windows_amd64.syso"
done
echo "winres: icon and version ${base:-0.0.0}.$((builds % 65536)) ($product) for gpuwizard.exe and gpuwizard-gui.exe"
