#!/usr/bin/env bash
# make test-windows: every package's tests, cross-compiled for Windows
# (GOOS=windows go test -c, cgo through mingw as the release build) and run
# under Wine, two at a time, in a Wine prefix of their own under
# build/wine/. Prints a table package → result → seconds and exits 1 when
# a package fails. Tests that need a real Windows feature Wine lacks are
# listed, with the reason, in tools/wine/not-under-wine.txt (and README);
# they are left out by name and counted in the table, nothing else is.
#
# Wine 8 (Debian 12) needs two stand-ins, both built here with mingw:
#  - bcryptprimitives.dll with ProcessPrng (tools/wine/bcryptprimitives.c):
#    Go 1.24 and newer take their random numbers from it and stop without
#    it; it goes in the prefix's system32 only.
#  - Go's os.RemoveAll deletes through NtSetInformationFile's
#    FileDispositionInformationEx class, which Wine 8 answers with
#    STATUS_NOT_IMPLEMENTED ("Unsupported class (64)"), where Windows
#    answers STATUS_INVALID_INFO_CLASS when it lacks the class; Go falls
#    back to the older class only for the latter, so every t.TempDir
#    cleanup fails with "unlinkat …: Invalid function". The test binaries
#    are built with an -overlay of Go's internal/syscall/windows/at_windows.go
#    that falls back on STATUS_NOT_IMPLEMENTED too (wine_overlay below). The
#    release binaries are built without it.
#
# Environment: WINE_OUT (default build/wine), WINE_JOBS (default 2),
# WINE_PKGS (packages to test, as ./dir or import paths; default all), GO,
# TAGS.
set -uo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go} TAGS=${TAGS:-migrated_fynedo}
OUT=$(mkdir -p "${WINE_OUT:-build/wine}" && cd "${WINE_OUT:-build/wine}" && pwd)
JOBS=${WINE_JOBS:-2}
CC=x86_64-w64-mingw32-gcc
export WINEPREFIX="$OUT/prefix" WINEDEBUG=-all WINEARCH=win64 WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY

source tools/wine/lib.sh

# stubs: the stub nvml.dll of gpu/nvml's tests, one folder per machine.
stubs() {
  for v in GPU OLD NONE; do
    dll gpu/nvml/testdata/nvml_stub.c "$OUT/nvml-stubs/$v/nvml.dll" "-DSTUB_$v"
  done
  export GPUWIZARD_NVML_STUBS
  GPUWIZARD_NVML_STUBS=$(winpath "$OUT/nvml-stubs")
}

# wine_overlay: Go's at_windows.go with STATUS_NOT_IMPLEMENTED added to
# Deleteat's fallback cases (see above); fails loudly when Go's source no
# longer has the line it extends.
wine_overlay() {
  local src line
  src="$("$GO" env GOROOT)/src/internal/syscall/windows/at_windows.go"
  line=$'\t\tSTATUS_NOT_SUPPORTED:'
  grep -q "^$line" "$src" || die "$src changed: the Wine RemoveAll fallback (tools/wine/test-windows.sh) needs updating"
  # In a folder whose name starts with _, which go list ./... ignores;
  # gofmt'd, for gofmt -l . walks it.
  mkdir -p "$OUT/_overlay"
  sed "s|^\(\t\tSTATUS_NOT_SUPPORTED\):\(.*\)$|\1,\2\n\t\tNTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED: Wine 8's answer (tools/wine/test-windows.sh)|" \
    "$src" | gofmt >"$OUT/_overlay/at_windows.go" || die "preparing the overlay of $src failed"
  printf '{"Replace":{"%s":"%s"}}\n' "$src" "$OUT/_overlay/at_windows.go" >"$OUT/_overlay/overlay.json"
}

# build PKGS...: one test binary per package with tests, in $OUT/tests.
build() {
  rm -rf "$OUT/tests" && mkdir -p "$OUT/tests"
  echo "Cross-compiling the tests of ${#@} packages for Windows (cgo through mingw; the first time several minutes)..."
  CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$CC CGO_LDFLAGS=-lssp \
    "$GO" test -c -tags "$TAGS" -overlay "$OUT/_overlay/overlay.json" -o "$OUT/tests/" "$@" || die "cross-compiling the tests failed"
}

# skips PKG: the -test.skip pattern of the package's tests listed in
# not-under-wine.txt ("" when none).
skips() {
  awk -v p="$1" '$1 == p { printf "%s%s", (n++ ? "|" : ""), "^" $2 "$" }' tools/wine/not-under-wine.txt
}

# run1 PKG: run one package's test binary in its source folder (testdata
# paths are relative to it), as go test does; writes RESULT SECONDS SKIPPED
# to $OUT/results/<name>.
run1() {
  local pkg=$1 name dir exe skip start rc
  name=${pkg##*/}
  dir=$("$GO" list -f '{{.Dir}}' "$pkg")
  exe="$OUT/tests/$name.test.exe"
  skip=$(skips "$pkg")
  start=$(date +%s)
  local result=pass try
  # A package that fails runs once more: passing then, it is "flaky" in
  # the table (counted as passing, its first log kept beside).
  for try in 1 2; do
    (cd "$dir" && timeout 900 wine "$exe" -test.count=1 -test.timeout=12m ${skip:+"-test.skip=$skip"}) \
      >"$OUT/logs/$name.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && break
    cp "$OUT/logs/$name.log" "$OUT/logs/$name.try$try.log"
  done
  [ "$try" = 2 ] && result=flaky
  [ $rc -eq 0 ] || result=FAIL
  [ $rc -eq 124 ] && result=TIMEOUT
  echo "$result $(($(date +%s) - start)) $(awk -v p="$pkg" '$1 == p' tools/wine/not-under-wine.txt | wc -l)" >"$OUT/results/$name"
}

main() {
  local t0 pkgs=() p
  t0=$(date +%s)
  if [ -n "${WINE_PKGS:-}" ]; then
    # Import paths, whatever form they were given in (./gpu/watch or
    # gpuwizard/gpu/watch): not-under-wine.txt names packages by import path.
    # Those without tests are left out, as in the whole run.
    read -ra pkgs <<<"$WINE_PKGS"
    local named
    named=$(CGO_ENABLED=1 GOOS=windows CC=$CC "$GO" list -tags "$TAGS" -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "${pkgs[@]}") ||
      die "go list $WINE_PKGS failed"
    mapfile -t pkgs < <(printf '%s\n' "$named" | grep .)
  else
    local list
    list=$(CGO_ENABLED=1 GOOS=windows CC=$CC "$GO" list -tags "$TAGS" -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...) ||
      die "go list failed"
    mapfile -t pkgs < <(printf '%s\n' "$list" | grep .)
  fi
  [ ${#pkgs[@]} -gt 0 ] || die "no test package found"
  prefix
  stubs
  wine_overlay
  build "${pkgs[@]}"
  local tb=$(($(date +%s) - t0))
  rm -rf "$OUT/logs" "$OUT/results" && mkdir -p "$OUT/logs" "$OUT/results"
  wineserver -p 60 # one Wine server for every run
  export -f run1 skips
  export GO OUT
  printf '%s\n' "${pkgs[@]}" | xargs -P "$JOBS" -I{} bash -c 'run1 "$1"' _ {}
  wineserver -k 2>/dev/null
  BUILD_SECONDS=$tb START=$t0 report "${pkgs[@]}"
}

# report PKGS...: the table, then the failures' last lines.
report() {
  local pass=0 fail=0 failed=() p name r s k
  local pkgs=("$@")
  printf '\n%-48s %-8s %6s  %s\n' package result seconds "left out (not-under-wine.txt)"
  for p in "${pkgs[@]}"; do
    name=${p##*/}
    read -r r s k <"$OUT/results/$name" 2>/dev/null || { r=MISSING s=0 k=0; }
    printf '%-48s %-8s %6s  %s\n' "$p" "$r" "$s" "$([ "$k" -gt 0 ] && echo "$k")"
    if [ "$r" = pass ] || [ "$r" = flaky ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$p"); fi
  done
  for p in "${failed[@]}"; do
    echo; echo "== $p (${OUT#"$PWD"/}/logs/${p##*/}.log):"; tail -25 "$OUT/logs/${p##*/}.log"
  done
  echo
  echo "Windows (Wine): $pass of ${#pkgs[@]} test packages pass; build ${BUILD_SECONDS}s, all $(($(date +%s) - START))s"
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

main "$@"
