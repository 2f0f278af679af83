package gpu

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// report is one real report kept under testdata/reports: a header with its
// source and the cause the thread settled, then the text as posted.
type report struct {
	name, source string
	cause        Cause
	text         string
}

func loadReports(t testing.TB) []report {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "reports", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reports: %v", err)
	}
	var out []report
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		head, body, ok := strings.Cut(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n---\n")
		if !ok {
			t.Fatalf("%s: no --- line after the header", file)
		}
		r := report{name: strings.TrimSuffix(filepath.Base(file), ".txt"), text: body}
		if strings.Contains(string(b), "\r\n") {
			r.text = strings.SplitN(string(b), "---\r\n", 2)[1] // keep the CRLF the report came with
		}
		for _, line := range strings.Split(head, "\n") {
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
			switch k {
			case "source":
				r.source = v
			case "expected-cause":
				r.cause = Cause(v)
			}
		}
		if !strings.HasPrefix(r.source, "https://") || r.cause.rank() == len(Causes) {
			t.Fatalf("%s: header needs a source URL and a known expected-cause", file)
		}
		out = append(out, r)
	}
	return out
}

func TestRealReports(t *testing.T) {
	matrix := mustMatrix(t)
	reports := loadReports(t)
	if len(reports) < 25 {
		t.Fatalf("%d reports; the collection must keep at least 25", len(reports))
	}
	causes := map[Cause]int{}
	for _, r := range reports {
		causes[r.cause]++
		t.Run(r.name, func(t *testing.T) {
			f := ParsePaste(r.text, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
			rep := Diagnose(f, matrix)
			if len(rep.Findings) == 0 {
				t.Fatal("no findings")
			}
			top := rep.Findings[0]
			if top.Cause != r.cause {
				t.Errorf("top finding %s (%s) %q; the thread settled %s", top.ID, top.Cause, top.Title, r.cause)
			}
			if !strings.Contains(strings.Join(top.Evidence, "\n"), "report") {
				t.Errorf("the top finding quotes no line of the report: %q", top.Evidence)
			}
			if len(top.Fix) == 0 {
				t.Error("the top finding has no fix")
			}
			var buf bytes.Buffer
			if err := rep.WriteText(&buf, false); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "golden", "reports", r.name+".txt"), buf.Bytes())
		})
	}
	if len(causes) < 9 {
		t.Errorf("reports cover %d causes; spread them wider: %v", len(causes), causes)
	}
}

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
	f := ParsePaste(text, time.Now())
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
	f := ParsePaste("my training is slow, any idea?\nthanks", time.Now())
	if len(f.Pythons) != 0 || len(f.NVML.GPUs) != 0 || f.NVML.DriverVersion != "" || f.Host.OS != "" {
		t.Fatalf("guessed facts from prose: %+v", f)
	}
	rep := Diagnose(f, mustMatrix(t))
	if rep.Findings[0].ID != "report_nothing_recognised" || !strings.Contains(fixCommands(rep.Findings[0]), "nvidia-smi") {
		t.Fatalf("want a request for the right output, got %+v", rep.Findings[0])
	}
}

func TestPasteRunNextWhenNotEnough(t *testing.T) {
	f := ParsePaste("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).", time.Now())
	rep := Diagnose(f, mustMatrix(t))
	if rep.Findings[0].Cause != CauseDriverTooOld {
		t.Fatalf("top = %+v", rep.Findings[0])
	}
	if !hasFinding(rep, "report_run_next") || !strings.Contains(fixCommands(findingByID(rep, "report_run_next")), "torch.version.cuda") {
		t.Fatal("a report without the torch build must say what to run next")
	}
}

func fixCommands(f Finding) string {
	var cmds []string
	for _, s := range f.Fix {
		cmds = append(cmds, s.Command)
	}
	return strings.Join(cmds, "\n")
}

func findingByID(r Report, id string) Finding {
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	return Finding{}
}

// FuzzParsePaste: no input may panic, and parsing stays within 100 ms per
// 100 KB (with slack for the race detector and a loaded machine).
func FuzzParsePaste(f *testing.F) {
	for _, r := range loadReports(f) {
		f.Add(r.text)
	}
	f.Add("| NVIDIA-SMI 5 Driver Version: x CUDA Version: N/A |\n|   0  X  Off | 00000000:01:00.0 Off |\n| 99999999999999999999MiB / 1MiB | 5% Default |")
	f.Add(">>> torch.__version__\n>>> torch.version.cuda\nNone\n")
	matrix, err := LoadMatrix()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		facts := ParsePaste(s, start)
		fuzzBudget(t, len(s), start)
		r := Diagnose(facts, matrix)
		if r.Verdict == "" {
			t.Fatal("no verdict")
		}
	})
}

func TestPasteSpeedOnLargeInput(t *testing.T) {
	big := reportCorpus(t, 100_000)
	worst := strings.Repeat("torch ", 100_000/6) // long runs without newlines
	for _, s := range []string{big, worst, strings.Repeat("|", 100_000), strings.Repeat("a\n", 50_000)} {
		start := time.Now()
		ParsePaste(s, start)
		fuzzBudget(t, len(s), start)
	}
}

// reportCorpus is n bytes of the recorded reports, repeated.
func reportCorpus(tb testing.TB, n int) string {
	var sb strings.Builder
	for _, r := range loadReports(tb) {
		sb.WriteString(r.text)
	}
	unit := sb.String()
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// BenchmarkParsePaste100KB: the rule is ≤ 100 ms per 100 KB of report.
func BenchmarkParsePaste100KB(b *testing.B) {
	text := reportCorpus(b, 100_000)
	matrix := mustMatrix(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		Diagnose(ParsePaste(text, now), matrix)
	}
}
