#!/bin/sh
# Checks that the Go on PATH (or $GO) is at least the version go.mod's `go`
# line asks for, and says in one line what to install when it is not: an
# older Go (Debian 12's own is 1.19) fails later with "package slices is not
# in GOROOT". Go 1.21 and newer fetch the toolchain go.mod asks for by
# themselves (GOTOOLCHAIN=auto); `go version` run here reports that one.
# Usage: tools/check-go.sh [go.mod]
set -eu
gomod=${1:-go.mod}
go=${GO:-go}
need=$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$gomod" | head -n 1)
[ -n "$need" ] || { echo "tools/check-go.sh: $gomod has no 'go' line" >&2; exit 1; }
where="install Go $need or newer from https://go.dev/dl/ (the distribution's golang package is often older), put its bin/ first on PATH, and run make again"
if ! command -v "$go" >/dev/null 2>&1; then
  echo "Go $need or newer is needed to build gpuwizard, and there is no '$go' on PATH: $where." >&2
  exit 1
fi
if ! out=$("$go" version 2>&1); then
  echo "Go $need or newer is needed to build gpuwizard; '$go version' failed ($(echo "$out" | tail -n 1)): $where." >&2
  exit 1
fi
have=$(echo "$out" | sed -n 's/.*go version go\([0-9][0-9.]*[a-z0-9]*\).*/\1/p')
# Compare major, minor and patch; a pre-release (1.26rc1) comes before 1.26.0.
older=$(awk -v have="$have" -v need="$need" 'BEGIN {
  split(need, n, "."); pre = 0
  if (match(have, /[a-z]/)) { pre = 1; have = substr(have, 1, RSTART - 1) }
  split(have, h, ".")
  for (i = 1; i <= 3; i++) {
    hv = (i in h && h[i] != "") ? h[i] + 0 : (pre && i == 3 ? -1 : 0)
    nv = (i in n && n[i] != "") ? n[i] + 0 : 0
    if (hv < nv) { print 1; exit } else if (hv > nv) { print 0; exit }
  }
  print 0 }')
if [ -z "$have" ] || [ "$older" = 1 ]; then
  echo "Go $need or newer is needed to build gpuwizard (go.mod), but '$go' is ${have:-unknown} ($(command -v "$go")): $where." >&2
  exit 1
fi
