# Shared by tools/wine/test-windows.sh and tools/wine/gui-windows.sh (sourced
# from the repository's root, with OUT, CC and WINEPREFIX set): the Wine
# prefix of gpuwizard's Windows checks, with the stand-in DLL Wine 8 lacks.

die() { echo "${0##*/}: $*" >&2; exit 1; }
for tool in "$CC" wine wineboot wineserver; do
  command -v "$tool" >/dev/null || die "$tool is missing: make test-windows installs it (gcc-mingw-w64-x86-64, wine64, wine)"
done

# winpath PATH: the Windows name of a Unix path (Wine's Z: is /).
winpath() { printf 'Z:%s' "$(printf '%s' "$1" | tr / '\\')"; }

# dll SRC OUT [CFLAGS...]: build a DLL with mingw when SRC is newer.
dll() {
  local src=$1 out=$2; shift 2
  [ "$out" -nt "$src" ] && return 0
  mkdir -p "$(dirname "$out")"
  "$CC" -shared -O2 -Wall "$@" -o "$out" "$src" || die "building $out from $src failed"
}

# prefix: a Wine prefix made once (wineboot -i, no display needed), with
# the ProcessPrng stand-in in its system32.
prefix() {
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "Creating the Wine prefix $WINEPREFIX (once; about 20 s)..."
    if ! timeout 300 wineboot -i >"$OUT/wineboot.log" 2>&1; then
      # Seen once on a loaded host (ShellExecuteEx failed on the first
      # boot; the same prefix made again booted): one more try from scratch.
      echo "wineboot -i failed (see $OUT/wineboot.log); making the prefix again..."
      wineserver -k 2>/dev/null || true
      rm -rf "$WINEPREFIX"
      timeout 300 wineboot -i >"$OUT/wineboot.log" 2>&1 || die "wineboot -i failed twice: see $OUT/wineboot.log"
    fi
    wineserver -w
  fi
  dll tools/wine/bcryptprimitives.c "$OUT/dll/bcryptprimitives.dll" -ladvapi32
  cp "$OUT/dll/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
}

