#!/usr/bin/env bash
# Fuzz every Fuzz target of every package (make fuzz): first for FUZZMIN
# inputs (a count, so each target runs at least that many however slow it
# is), then for FUZZTIME. A failing target does not stop the others; the
# failures are listed at the end and the script exits 1.
#
# A failure is an input Go saved under the package's testdata/fuzz/, or any
# failure of the count-based pass. A duration-based pass that ends with a
# bare "context deadline exceeded" and saves no input is Go's coordinator
# race at the -fuzztime deadline (golang/go#75804, fixed in Go 1.27, not in
# 1.26.x): it is counted as a flake and reported, not failed.
#   tools/fuzz.sh [FUZZMIN [FUZZTIME]]     defaults 1000x and 30s
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go} TAGS=${TAGS:-migrated_fynedo}
min=${1:-1000x} dur=${2:-30s}
fails=() flakes=() n=0
# saved PKG TARGET: the inputs Go has saved for the target.
saved() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort; }
for p in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  for t in $("$GO" test -tags "$TAGS" -list 'Fuzz.*' "$p" | grep '^Fuzz'); do
    n=$((n + 1))
    echo "== $p $t: $min, then $dur"
    before=$(saved "$p" "$t")
    if ! "$GO" test -tags "$TAGS" -run '^$' -fuzz "^$t\$" -fuzztime "$min" -fuzzminimizetime 200x "$p"; then
      fails+=("$p:$t"); continue
    fi
    log=$(mktemp)
    "$GO" test -tags "$TAGS" -run '^$' -fuzz "^$t\$" -fuzztime "$dur" -fuzzminimizetime 10s "$p" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" != 0 ]; then
      if [ "$(saved "$p" "$t")" = "$before" ] && grep -q '^    context deadline exceeded$' "$log"; then
        flakes+=("$p:$t")
      else
        fails+=("$p:$t")
      fi
    fi
    rm -f "$log"
  done
done
echo "fuzz: $n targets, ${#fails[@]} failed, ${#flakes[@]} stopped by Go's deadline race (golang/go#75804) without a failing input"
[ ${#flakes[@]} = 0 ] || echo "  deadline race: ${flakes[*]}"
[ ${#fails[@]} = 0 ] || { echo "  FAILED: ${fails[*]} (inputs under each package's testdata/fuzz/)"; exit 1; }
