package doctor

import (
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/corpus"
	"gpuwizard/gpu/paste"
)

var showMisses = flag.Bool("misses", false, "log every corpus report whose first finding names another cause")

// diagnoseText parses a pasted text and diagnoses it, on the day the
// corpus's reports are judged on.
func diagnoseText(t testing.TB, text string) gpu.Report {
	t.Helper()
	return Diagnose(paste.Parse(text, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)), mustMatrix(t))
}

// score runs the doctor on every report of a corpus part and returns the
// share whose first finding names the settled cause, with a table per
// cause and the misses.
func score(t *testing.T, part string) (float64, string, []string) {
	t.Helper()
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ right, total int }
	per := map[gpu.Cause]*tally{}
	var misses []string
	right := 0
	for _, r := range reports {
		rep := diagnoseText(t, r.Text)
		if per[r.Cause] == nil {
			per[r.Cause] = &tally{}
		}
		per[r.Cause].total++
		got := gpu.Cause("(none)")
		id := ""
		if len(rep.Findings) > 0 {
			got, id = rep.Findings[0].Cause, rep.Findings[0].ID
		}
		if got == r.Cause {
			right++
			per[r.Cause].right++
			continue
		}
		misses = append(misses, fmt.Sprintf("%s: want %s, got %s (%s)", r.Name, r.Cause, got, id))
	}
	var rows []string
	for c, tl := range per {
		rows = append(rows, fmt.Sprintf("  %-24s %3d/%-3d", c, tl.right, tl.total))
	}
	sort.Strings(rows)
	sort.Strings(misses)
	return float64(right) / float64(len(reports)), strings.Join(rows, "\n"), misses
}

func TestCorpusTuning(t *testing.T) {
	share, table, misses := score(t, "tuning")
	t.Logf("tuning part: %.1f%% right first cause\n%s", 100*share, table)
	if *showMisses {
		t.Logf("misses:\n  %s", strings.Join(misses, "\n  "))
	}
	if share < 0.94 {
		t.Errorf("%.1f%% of the tuning part right, want at least 94%%; misses:\n  %s", 100*share, strings.Join(misses, "\n  "))
	}
}

// BenchmarkFrom100KB is `doctor --from` on a 100 KB paste (the tuning
// reports, repeated): parsing and judging. The budget is 50 ms.
func BenchmarkFrom100KB(b *testing.B) {
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for sb.Len() < 100_000 {
		for _, r := range reports {
			sb.WriteString(r.Text)
			sb.WriteString("\n")
		}
	}
	text := sb.String()[:100_000]
	matrix := mustMatrix(b)
	now := time.Now()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Diagnose(paste.Parse(text, now), matrix)
	}
}

// TestCorpusHeldout scores the held-out part: reports collected apart and
// never read while the signatures and rules were written.
func TestCorpusHeldout(t *testing.T) {
	share, table, misses := score(t, "heldout")
	t.Logf("held-out part: %.1f%% right first cause\n%s", 100*share, table)
	if *showMisses {
		t.Logf("misses:\n  %s", strings.Join(misses, "\n  "))
	}
	// The goal is 95%; this floor is what the doctor reached (README), so
	// that a change that loses held-out reports fails.
	if share < 0.75 {
		t.Errorf("%.1f%% of the held-out part right, below the floor of 75%%", 100*share)
	}
}

// FuzzDiagnosePaste: any text, parsed and judged, gives a verdict and a
// first finding with a known cause, without panicking.
func FuzzDiagnosePaste(f *testing.F) {
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		f.Fatal(err)
	}
	for i, r := range reports {
		if i%4 == 0 {
			f.Add(r.Text)
		}
	}
	matrix := mustMatrix(f)
	f.Fuzz(func(t *testing.T, s string) {
		r := Diagnose(paste.Parse(s, time.Now()), matrix)
		if r.Verdict == "" {
			t.Fatal("no verdict")
		}
		for _, fd := range r.Findings {
			if fd.Cause.Rank() == len(gpu.Causes) || fd.Title == "" {
				t.Fatalf("finding without a known cause or title: %+v", fd)
			}
		}
	})
}
