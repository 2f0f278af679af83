package paste

import (
	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/corpus"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPasteCleaning(t *testing.T) {
	text := "Here is my output:\r\n" +
		"```\r\n" +
		"(venv) C:\\Users\\me\\proj> python -c \"import torch; print(torch.__version__)\"\r\n" +
		"> >>> torch.__version__\r\n" +
		"> '2.3.1+cu121'\r\n" +
		">>> torch.cuda.is_available()\r\n" +
		"False\r\n" +
		"```\r\n" +
		"| NVIDIA-SMI 546.33                 Driver Version: 546.33       CUDA Version: 12.3     |\r\n" +
		"|   0  NVIDIA GeForce RTX 3060      WDDM  | 00000000:01:00.0  On |                  N/A |\r\n" +
		"| 30%   45C    P8              15W / 170W |   1234MiB / 12288MiB |      3%      Default |\r\n" +
		"|    0   N/A  N/A      4242      C   ...\\python.exe                             900MiB |\r\n"
	f := Parse(text, time.Now())
	if f.Host.OS != "windows" {
		t.Errorf("OS = %q", f.Host.OS)
	}
	env := f.Pythons[0]
	pk, ok := env.Package("torch")
	if !ok || pk.Version != "2.3.1+cu121" || pk.CUDA != "12.1" {
		t.Fatalf("torch = %+v", pk)
	}
	if f.Paste.CUDAAvailable == nil || *f.Paste.CUDAAvailable {
		t.Error("is_available False not read")
	}
	if f.NVML.DriverVersion != "546.33" || f.NVML.CUDADriverVersion != "12.3" || len(f.NVML.GPUs) != 1 {
		t.Fatalf("nvidia-smi: %+v", f.NVML)
	}
	g := f.NVML.GPUs[0]
	if g.Name != "NVIDIA GeForce RTX 3060" || g.MemoryTotalMiB != 12288 || g.MemoryUsedMiB != 1234 || len(g.Processes) != 1 || g.Processes[0].PID != 4242 {
		t.Fatalf("GPU row: %+v", g)
	}
}

func TestPasteUnknownStaysUnknown(t *testing.T) {
	f := Parse("my training is slow, any idea?\nthanks", time.Now())
	if len(f.Pythons) != 0 || len(f.NVML.GPUs) != 0 || f.NVML.DriverVersion != "" || f.Host.OS != "" {
		t.Fatalf("guessed facts from prose: %+v", f)
	}
	if len(f.Paste.Formats) != 0 || len(f.Paste.Signatures) != 0 {
		t.Fatalf("recognised something in prose: %+v", f.Paste)
	}
}

// FuzzParsePaste: no input may panic, and parsing stays within 100 ms per
// 100 KB (with slack for the race detector and a loaded machine).
func FuzzParse(f *testing.F) {
	for _, r := range loadCorpus(f) {
		f.Add(r.Text)
	}
	f.Add("| NVIDIA-SMI 5 Driver Version: x CUDA Version: N/A |\n|   0  X  Off | 00000000:01:00.0 Off |\n| 99999999999999999999MiB / 1MiB | 5% Default |")
	f.Add(">>> torch.__version__\n>>> torch.version.cuda\nNone\n")
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		facts := Parse(s, start)
		fuzzBudget(t, len(s), start)
		if facts.Paste == nil || facts.Origin != "paste" {
			t.Fatal("a paste always gives paste facts")
		}
		for _, h := range facts.Paste.Signatures {
			if !strings.Contains(s, strings.TrimSuffix(h.Line, "…")) && !strings.Contains(gpu.Sanitize(s), strings.TrimSuffix(h.Line, "…")) {
				t.Fatalf("hit line %q is not in the text", h.Line)
			}
		}
	})
}

func TestPasteSpeedOnLargeInput(t *testing.T) {
	big := reportCorpus(t, 100_000)
	worst := strings.Repeat("torch ", 100_000/6) // long runs without newlines
	for _, s := range []string{big, worst, strings.Repeat("|", 100_000), strings.Repeat("a\n", 50_000)} {
		start := time.Now()
		Parse(s, start)
		fuzzBudget(t, len(s), start)
	}
}

// reportCorpus is n bytes of the recorded reports, repeated.
func reportCorpus(tb testing.TB, n int) string {
	var sb strings.Builder
	for _, r := range loadCorpus(tb) {
		sb.WriteString(r.Text)
	}
	unit := sb.String()
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// BenchmarkParsePaste100KB: parsing a 100 KB paste (the doctor package's
// benchmark adds the judging).
func BenchmarkParsePaste100KB(b *testing.B) {
	text := reportCorpus(b, 100_000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		Parse(text, now)
	}
}

func loadCorpus(tb testing.TB) []corpus.Report {
	tb.Helper()
	rs, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

// fuzzBudget catches inputs that make parsing blow up (quadratic or
// worse): 2 s per 100 KB, 20 times the speed rule (100 ms per 100 KB), so
// a loaded machine or the first call's one-time set-up never trips it
// (more under the race detector). Speed itself is measured by
// BenchmarkParsePaste100KB, not here.
func fuzzBudget(t *testing.T, n int, start time.Time) {
	limit := time.Duration(1+n/100_000) * 2 * time.Second
	if raceEnabled {
		limit *= 10
	}
	if d := time.Since(start); d > limit {
		t.Fatalf("took %s on %d bytes", d, n)
	}
}

// TestPasteIssueFormHeadings: GitHub issue forms put the answer on a line
// after the heading (TensorFlow's bug template).
func TestPasteIssueFormHeadings(t *testing.T) {
	text := "### TensorFlow version\n\n2.12.1\n\n### Custom code\n\nYes\n\n### OS platform and distribution\n\nWindows 11  23H2\n\n### Python version\n\n3.10.2\n"
	f := Parse(text, time.Now())
	if f.Host.OS != "windows" {
		t.Errorf("OS = %q", f.Host.OS)
	}
	pk, ok := f.Pythons[0].Package("tensorflow")
	if !ok || pk.Version != "2.12.1" {
		t.Fatalf("tensorflow = %+v", pk)
	}
	// A heading without an answer takes nothing from the next heading.
	f = Parse("### TensorFlow version\n\n### Custom code\n\nYes\n", time.Now())
	if len(f.Pythons) > 0 {
		if _, ok := f.Pythons[0].Package("tensorflow"); ok {
			t.Error("a heading's missing answer read from the next line")
		}
	}
}
