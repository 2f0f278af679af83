package doctor

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
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

// placeholders are findings that name no cause of their own (cause other
// because none is known): they do not count as naming "other" among the
// first three causes.
var placeholders = map[string]bool{"report_nothing_recognised": true, "report_cuda_unavailable": true, "report_run_next": true}

// topCauses is the distinct causes a report names, in order: the first
// finding's, then those of the errors and warnings after it (placeholders
// aside), at most n.
func topCauses(rep gpu.Report, n int) []gpu.Cause {
	var out []gpu.Cause
	for i, f := range rep.Findings {
		if len(out) == n {
			break
		}
		if i > 0 && (f.Severity != gpu.SevError && f.Severity != gpu.SevWarning || placeholders[f.ID]) {
			continue
		}
		if !slices.Contains(out, f.Cause) {
			out = append(out, f.Cause)
		}
	}
	return out
}

// scoreCard is how a corpus part scored: the share whose first finding
// names the settled cause (top-1), the share that names it among its
// first three causes (top-3), a table per cause, and the misses.
type scoreCard struct {
	top1, top3 float64
	table      string
	misses     []string
}

// score runs the doctor on every report of a corpus part (or, with
// prefix, of the batch whose names start so; several batches with their
// prefixes between commas, AN_,AO_) and scores it.
func score(t *testing.T, part, prefix string) scoreCard {
	t.Helper()
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ right, near, total int }
	per := map[gpu.Cause]*tally{}
	var sc scoreCard
	right, near, n := 0, 0, 0
	for _, r := range reports {
		if !slices.ContainsFunc(strings.Split(prefix, ","), func(p string) bool { return strings.HasPrefix(r.Name, p) }) {
			continue
		}
		n++
		rep := diagnoseText(t, r.Text)
		if per[r.Cause] == nil {
			per[r.Cause] = &tally{}
		}
		per[r.Cause].total++
		top := topCauses(rep, 3)
		if slices.Contains(top, r.Cause) {
			near++
			per[r.Cause].near++
		}
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
		sc.misses = append(sc.misses, fmt.Sprintf("%s: want %s, got %s (%s); first three: %v", r.Name, r.Cause, got, id, top))
	}
	if n == 0 {
		t.Fatalf("no reports in %s with names starting %q", part, prefix)
	}
	var rows []string
	for c, tl := range per {
		rows = append(rows, fmt.Sprintf("  %-24s top-1 %3d/%-3d top-3 %3d/%-3d", c, tl.right, tl.total, tl.near, tl.total))
	}
	sort.Strings(rows)
	sort.Strings(sc.misses)
	sc.top1, sc.top3 = float64(right)/float64(n), float64(near)/float64(n)
	sc.table = fmt.Sprintf("%d reports: top-1 %.1f%%, top-3 %.1f%%\n%s", n, 100*sc.top1, 100*sc.top3, strings.Join(rows, "\n"))
	return sc
}

var batchPrefix = flag.String("batch", "", "score only the corpus reports whose names start with this (a batch's letter and underscore, P_; several between commas, AN_,AO_)")

func TestCorpusTuning(t *testing.T) {
	sc := score(t, "tuning", *batchPrefix)
	t.Logf("tuning part: %s", sc.table)
	if *showMisses {
		t.Logf("misses:\n  %s", strings.Join(sc.misses, "\n  "))
	}
	if sc.top1 < 0.94 && *batchPrefix == "" {
		t.Errorf("%.1f%% of the tuning part right, want at least 94%%; misses:\n  %s", 100*sc.top1, strings.Join(sc.misses, "\n  "))
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

// BenchmarkThinProse100KB is `doctor --from` on 100 KB of prose that no
// error text decides, every line of it holding the literals the patterns
// look for, so that every cue (the first 64 KB) and every catalogue
// pattern runs on all of it: the worst case for the needles. It is over
// the 50 ms budget, as the catalogue alone was before the differential;
// it is here to see that it does not grow.
func BenchmarkThinProse100KB(b *testing.B) {
	unit := "I run my training in a docker container on Windows 11 with an RTX 5090 and an Intel UHD Graphics 620; " +
		"tensorflow and paddlepaddle and jax are installed, torch.cuda.is_available() returns False and nvidia-smi does not work. " +
		"It also happens on Colab and on my AWS EC2 t3.large instance, after a kernel update, with CUDA 12.4 and cuDNN 8.9.\n"
	text := strings.Repeat(unit, 100_000/len(unit)+1)[:100_000]
	matrix := mustMatrix(b)
	now := time.Now()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r := Diagnose(paste.Parse(text, now), matrix)
		if len(r.Findings) == 0 || !strings.HasPrefix(r.Findings[0].ID, "report_") {
			b.Fatalf("first finding %+v", r.Findings)
		}
	}
}

// TestCorpusHeldout scores the held-out part: reports collected apart and
// never read while the signatures and rules were written.
func TestCorpusHeldout(t *testing.T) {
	sc := score(t, "heldout", *batchPrefix)
	t.Logf("held-out part: %s", sc.table)
	if *showMisses {
		t.Logf("misses:\n  %s", strings.Join(sc.misses, "\n  "))
	}
	// The goal is 95%; this floor is what the doctor reached (README), so
	// that a change that loses held-out reports fails.
	if sc.top1 < 0.75 && *batchPrefix == "" {
		t.Errorf("%.1f%% of the held-out part right, below the floor of 75%%", 100*sc.top1)
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
