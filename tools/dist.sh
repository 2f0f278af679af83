#!/usr/bin/env bash
# make dist: the release tarball dist/gpuwizard-VERSION-linux-ARCH.tar.xz with
# both binaries (stripped, -trimpath), the .desktop entry, the icon, an
# install script, README.md, the attribution of the embedded data and the
# licences of the Go modules linked in. It refuses to pack a CLI binary that
# links GL/X11 libraries or needs a glibc newer than GLIBC_FLOOR (2.28:
# RHEL/Rocky 8); the CLI is built with zig (tools/zig-cc) for glibc 2.17.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=${TAGS:-migrated_fynedo}
FLOOR=${GLIBC_FLOOR:-2.28}
zig=$(tools/get-zig.sh) || { echo "dist: zig is needed for the glibc floor (tools/get-zig.sh)" >&2; exit 1; }
command -v patchelf >/dev/null || { echo "dist: patchelf is needed (make deps installs it)" >&2; exit 1; }

arch=$($GO env GOARCH)
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
name=gpuwizard-$version-linux-$arch
stage=dist/$name
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/share/applications" "$stage/share/icons" "$stage/licenses"

echo "dist: building $name"
ZIG=$zig CC="$PWD/tools/zig-cc" CGO_ENABLED=1 $GO build -buildvcs=auto -trimpath -tags "$TAGS" -ldflags='-s -w' -o "$stage/bin/gpuwizard" .
$GO build -buildvcs=auto -trimpath -tags "$TAGS" -ldflags='-s -w' -o "$stage/bin/gpuwizard-gui" ./cmd/gpuwizard-gui

# The rules the CLI binary must keep.
if ldd "$stage/bin/gpuwizard" | grep -iE 'lib(GL|GLX|EGL|X11|xcb)[.-]'; then
  echo "dist: FAIL: bin/gpuwizard links a GL or X11 library (above)" >&2; exit 1
fi
need=$(objdump -T "$stage/bin/gpuwizard" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1)
if [ "$(printf '%s\n%s\n' "$need" "$FLOOR" | sort -V | tail -1)" != "$FLOOR" ]; then
  echo "dist: FAIL: bin/gpuwizard needs glibc $need, newer than the floor $FLOOR" >&2; exit 1
fi
echo "dist: bin/gpuwizard links no GL/X11 library and needs glibc >= $need (floor $FLOOR)"

cp assets/icon.png "$stage/share/icons/io.gpuwizard.app.png"
cp assets/io.gpuwizard.app.desktop "$stage/share/applications/io.gpuwizard.app.desktop.in"
cp README.md "$stage/"
cp assets/mnist/NOTICE.md "$stage/licenses/built-in-dataset-MNIST.md"
# The licence files of every module linked into either binary.
$GO list -deps -tags "$TAGS" -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}' . ./cmd/gpuwizard-gui | sort -u |
while read -r mod dir; do
  for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/NOTICE*; do
    [ -f "$f" ] || continue
    out="$stage/licenses/$(echo "$mod" | tr '/' '_')-$(basename "$f")"
    cp "$f" "$out" && chmod 644 "$out"
  done
done
cat >"$stage/install.sh" <<'INSTALL'
#!/bin/sh
# Installs gpuwizard for the current user (PREFIX=~/.local), or system-wide
# with PREFIX=/usr/local and root.
set -e
cd "$(dirname "$0")"
PREFIX=${PREFIX:-$HOME/.local}
install -D -m 755 bin/gpuwizard "$PREFIX/bin/gpuwizard"
install -D -m 755 bin/gpuwizard-gui "$PREFIX/bin/gpuwizard-gui"
install -D -m 644 share/icons/io.gpuwizard.app.png "$PREFIX/share/icons/hicolor/512x512/apps/io.gpuwizard.app.png"
mkdir -p "$PREFIX/share/applications"
sed -e "s|@BINDIR@|$PREFIX/bin|" -e "s|@ICON@|$PREFIX/share/icons/hicolor/512x512/apps/io.gpuwizard.app.png|" \
  share/applications/io.gpuwizard.app.desktop.in >"$PREFIX/share/applications/io.gpuwizard.app.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database "$PREFIX/share/applications" || true
echo "Installed $PREFIX/bin/gpuwizard and $PREFIX/bin/gpuwizard-gui, with a menu entry."
INSTALL
chmod 755 "$stage/install.sh"
tar -C dist -cJf "dist/$name.tar.xz" "$name"
rm -rf "$stage"
ls -l "dist/$name.tar.xz"
