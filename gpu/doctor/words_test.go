package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/corpus"
	"gpuwizard/gpu/internal/wordmodel"
)

// TestWordModelReproducible: the embedded model is what the generator
// writes from the tuning part (and only from it).
func TestWordModelReproducible(t *testing.T) {
	m, err := wordmodel.FromTuning(filepath.Join("..", "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Format(), wordModelFile) {
		t.Fatal("gpu/doctor/wordmodel.txt is not what the tuning part gives: run `go run ./gpu/internal/wordmodel/gen` from the repository's root")
	}
}

// withWords runs fn with other word settings.
func withWords(s wordSettings, fn func()) {
	old := words
	words = s
	defer func() { words = old }()
	fn()
}

// TestWordFallback: a thin report (no error text that decides) gets its
// likely cause from its facts and words first, with the evidence and a
// fix; a healthy report and a question without a problem get none.
func TestWordFallback(t *testing.T) {
	cases := []struct {
		name, text string
		want       gpu.Cause // "" for no likely cause
	}{
		{"windows pip torch, on the CPU", "Windows 11, RTX 3060. I did pip install torch torchvision in my venv, but the GPU sits idle while " +
			"training is slow. print(torch.__version__) shows 2.1.0+cpu. What did I do wrong?", gpu.CauseCPUOnlyBuild},
		{"windows pip torch, not available: the symptom joins the cause", "Windows 11, RTX 3060. I did pip install torch torchvision and now torch.cuda.is_available() returns False. " +
			"print(torch.__version__) shows 2.1.0+cpu. How do I make pytorch use my GPU instead of the CPU?", gpu.CauseCPUOnlyBuild},
		{"docker without the GPU", "I run my training in a docker container built from my Dockerfile with docker compose, " +
			"and inside the container it fails: could not select device driver with capabilities gpu. The host has the nvidia driver.", gpu.CauseWSLOrContainer},
		{"nouveau after a kernel update", "After a kernel update and reboot nvidia-smi does not work. lsmod shows nouveau loaded, " +
			"dkms status shows the nvidia module not built for the new kernel. Secure boot is enabled. What is wrong with the driver?", gpu.CauseDriverMissing},
		{"healthy nvidia-smi", mustRead(t, filepath.Join("..", "testdata", "healthy", "nvidia-smi.txt")), ""},
		{"a question without a problem", "Which GPU should I buy for training transformers, a 4090 or two 3090s?", ""},
		{"torch before and after an upgrade, and the driver's message in words", "After I upgraded pytorch from 1.0 to 1.2, torch.cuda.is_available() returns False.\n" +
			">>> print(torch.__version__)\n1.0.1\n>>> print(torch.version.cuda)\n9.0.176\nand after the upgrade:\n>>> print(torch.__version__)\n1.2.0\n" +
			">>> print(torch.version.cuda)\n10.0.130\nThe error says the NVIDIA driver is too old. Do I need a new driver?", gpu.CauseDriverTooOld},
		{"advice sought, not trouble", "Which GPU is better for fine-tuning Llama with LoRA, a used 3090 or a new 4070 Ti?", ""},
	}
	for _, c := range cases {
		r := diagnoseText(t, c.text)
		var got *gpu.Finding
		for i, f := range r.Findings {
			if strings.HasPrefix(f.ID, "report_likely_") && got == nil {
				got = &r.Findings[i]
			}
		}
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%s: %s: %s", c.name, got.ID, got.Title)
		case c.want != "" && r.Findings[0].Cause != c.want:
			t.Errorf("%s: first finding %s (%s), want %s", c.name, r.Findings[0].ID, r.Findings[0].Cause, c.want)
		case c.want != "" && got != nil:
			if got.Severity != gpu.SevWarning || len(got.Fix) < 2 || got.Fix[0].Command == "" || len(got.Evidence) == 0 {
				t.Errorf("%s: want a warning with evidence, a command that tells the causes apart and a fix, got %+v", c.name, *got)
			}
		}
	}
}

// TestWordFallbackOutranked: an error text that decides outranks the
// words: no likely causes beside it.
func TestWordFallbackOutranked(t *testing.T) {
	r := diagnoseText(t, "I installed pip install torch on windows and torch.cuda.is_available() is False, it uses the cpu.\n"+
		"RuntimeError: CUDA error: out of memory\nTried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity)")
	for _, f := range r.Findings {
		if strings.HasPrefix(f.ID, "report_likely_") {
			t.Errorf("a word finding beside an error text: %s", f.ID)
		}
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestWordFallbackQuietOnHealthyPieces: pieces of healthy machines'
// reports (each cut at many lines, as a paste often is) never get a word
// finding.
func TestWordFallbackQuietOnHealthyPieces(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "healthy", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatal("no healthy reports", err)
	}
	for _, f := range files {
		text := mustRead(t, f)
		lines := strings.SplitAfter(text, "\n")
		for n := 1; n <= len(lines); n += 3 {
			piece := strings.Join(lines[:n], "")
			for _, fd := range diagnoseText(t, piece).Findings {
				if strings.HasPrefix(fd.ID, "report_likely_") {
					t.Errorf("%s, first %d lines: %s: %v", filepath.Base(f), n, fd.Title, fd.Evidence)
				}
			}
		}
	}
}

// TestToolNoise: the lines tools print on every machine hold no trouble
// word, and dropping them line by line is what one pattern over the
// whole text did.
func TestToolNoise(t *testing.T) {
	smi := "    Remapping Failure Occurred        : No\nIs XPU available: False\nGPU 0: NVIDIA GeForce RTX 3090\n"
	if w := hasTrouble(smi); w != "" {
		t.Errorf("nvidia-smi -q and collect_env lines: trouble %q", w)
	}
	if w := hasTrouble(smi + "the training failed\n"); w == "" {
		t.Errorf("prose after them: no trouble")
	}
	whole := regexp.MustCompile(`(?m)` + toolNoiseRE.String())
	texts := []string{smi, smi[:len(smi)-1], "\n\n" + smi + "\r\n"}
	for _, part := range []string{"tuning", "heldout"} {
		rs, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			texts = append(texts, strings.ToLower(r.Text))
		}
	}
	for _, low := range texts {
		if got, want := dropToolNoise(low), whole.ReplaceAllString(low, ""); got != want {
			t.Errorf("on %.80q: %.200q, want %.200q", low, got, want)
		}
	}
}

// TestQuestionAndQueryTrouble: a question about getting the GPU used,
// and a CUDA query a terminal answers False, are trouble; the words are
// looked for only near the question or the query (a long line costs
// little, whatever it repeats).
func TestQuestionAndQueryTrouble(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{"how can i enable the gpu in docker compose?", "how can i"},
		{"is there a way to use cuda here", "is there a way"},
		{"how to install it? the gpu works", ""},
		{"how to " + strings.Repeat("x", 300) + " gpu", ""},
		{"how do i cite this paper", ""},
	} {
		if got := gpuQuestion(c.text); got != c.want {
			t.Errorf("gpuQuestion(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{">>> torch.cuda.is_available()\nfalse", true},
		{"in [1]: tf.test.is_built_with_cuda()\nout[1]: false", true},
		{">>> torch.cuda.is_available()\ntrue", false},
		{"torch.cuda.is_available()" + strings.Repeat(" ", 300) + "\nfalse", false},
	} {
		if got := falseAnswered(c.text); got != c.want {
			t.Errorf("falseAnswered(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
