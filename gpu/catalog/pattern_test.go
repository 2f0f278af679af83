package catalog

import (
	"strings"
	"testing"
)

// TestLineCache: the cached line bounds are those lineStart and lineEnd
// give, for every byte of a text with empty lines, a long line and no
// final newline, asked in and out of order.
func TestLineCache(t *testing.T) {
	s := "first\n\nthird line\n" + strings.Repeat("x", 300) + "\nlast"
	lc := &lineCache{s: s}
	order := make([]int, 0, 2*(len(s)+1))
	for i := 0; i <= len(s); i++ {
		order = append(order, i)
	}
	for i := len(s); i >= 0; i -= 7 {
		order = append(order, i)
	}
	for _, i := range order {
		lo, hi := lc.bounds(i)
		if lo != lineStart(s, i) || hi != lineEnd(s, i) {
			t.Fatalf("bounds(%d) = %d, %d; want %d, %d", i, lo, hi, lineStart(s, i), lineEnd(s, i))
		}
	}
}

// TestPatternLongLine: a pattern finds its matches on a 100 KB line
// without line breaks that holds its needle thousands of times, as on
// short lines.
func TestPatternLongLine(t *testing.T) {
	p := MustPattern(`\bcpu version\b[^\n]{0,20}\bgpu version`, "cpu version")
	line := strings.Repeat("a cpu version, then ", 5000) + "a cpu version and a gpu version"
	if got, want := p.FindIndex(line), p.Regexp().FindStringIndex(line); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("found %v, the regexp %v", got, want)
	}
}

// BenchmarkPatternLongLine: the needle on every 20 bytes of a 100 KB line
// (a log pasted without line breaks). Each occurrence used to scan the
// whole line for its bounds.
func BenchmarkPatternLongLine(b *testing.B) {
	p := MustPattern(`\bcpu version\b[^\n]{0,20}\bgpu version`, "cpu version")
	line := strings.Repeat("a cpu version, then ", 5000)
	for b.Loop() {
		if p.FindIndex(line) != nil {
			b.Fatal("a match where there is none")
		}
	}
}
