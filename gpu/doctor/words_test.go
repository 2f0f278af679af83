package doctor

import (
	"bytes"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/corpus"
	"gpuwizard/gpu/internal/wordmodel"
)

var (
	wordCV   = flag.Bool("wordcv", false, "cross-validate the word fallback at every setting of the grid, 3 times 5-fold")
	wordGrid = flag.Bool("wordgrid", false, "with -wordcv, for several feature counts too")
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

func TestWordFallback(t *testing.T) {
	cases := []struct {
		name, text string
		want       gpu.Cause // "" for no word finding
	}{
		{"windows pip torch, on the CPU", "Windows 11, RTX 3060. I did pip install torch torchvision in my venv, but the GPU sits idle while " +
			"training is slow. print(torch.__version__) shows 2.1.0+cpu. What did I do wrong?", gpu.CauseCPUOnlyBuild},
		{"windows pip torch, not available (a symptom: the fallback stays behind it)", "Windows 11, RTX 3060. I did pip install torch torchvision and now torch.cuda.is_available() returns False. " +
			"print(torch.__version__) shows 2.1.0+cpu. How do I make pytorch use my GPU instead of the CPU?", ""},
		{"docker without the GPU", "I run my training in a docker container built from my Dockerfile with docker compose, " +
			"and inside the container it fails: could not select device driver with capabilities gpu. The host has the nvidia driver.", gpu.CauseWSLOrContainer},
		{"nouveau after a kernel update", "After a kernel update and reboot nvidia-smi does not work. lsmod shows nouveau loaded, " +
			"dkms status shows the nvidia module not built for the new kernel. Secure boot is enabled. What is wrong with the driver?", gpu.CauseDriverMissing},
		{"healthy nvidia-smi", mustRead(t, filepath.Join("..", "testdata", "healthy", "nvidia-smi.txt")), ""},
		{"a question without a problem", "Which GPU should I buy for training transformers, a 4090 or two 3090s?", ""},
	}
	for _, c := range cases {
		r := diagnoseText(t, c.text)
		var got *gpu.Finding
		for i, f := range r.Findings {
			if strings.HasPrefix(f.ID, "report_words_") {
				got = &r.Findings[i]
			}
		}
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%s: %s: %s", c.name, got.ID, got.Title)
		case c.want != "" && got == nil:
			t.Errorf("%s: no word finding; first: %+v", c.name, r.Findings[0])
		case c.want != "":
			if got.Cause != c.want || r.Findings[0].ID != got.ID || got.Severity != gpu.SevWarning || len(got.Fix) == 0 ||
				!strings.HasPrefix(got.Evidence[0], "words: ") {
				t.Errorf("%s: want a first warning of %s with words and a fix, got %+v (first %s)", c.name, c.want, *got, r.Findings[0].ID)
			}
		}
	}
}

// TestWordFallbackOutranked: any real evidence outranks the words.
func TestWordFallbackOutranked(t *testing.T) {
	r := diagnoseText(t, "I installed pip install torch on windows and torch.cuda.is_available() is False, it uses the cpu.\n"+
		"RuntimeError: CUDA error: out of memory\nTried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity)")
	for _, f := range r.Findings {
		if strings.HasPrefix(f.ID, "report_words_") {
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

// TestWordFallbackCrossValidation scores the whole doctor on the tuning
// part by 5-fold cross-validation, the word model of each fold trained on
// the other four, without the fallback and with it at several settings.
// The fallback's threshold was chosen from this table; the held-out part
// plays no part in it.
func TestWordFallbackCrossValidation(t *testing.T) {
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		t.Fatal(err)
	}
	const folds = 5
	repeats := 1
	if *wordCV {
		repeats = 3
	}
	ks := []int{wordmodel.DefaultK}
	if *wordCV && *wordGrid {
		ks = []int{250, 500, 1000, 2000, 4000, 8000}
	}
	thresholds := []float64{0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999}
	type setting struct {
		th        float64
		min       int
		trouble   bool
		weakOther bool
	}
	settings := []setting{{words.threshold, words.minWords, words.trouble, words.weakOther}}
	for _, weakOther := range []bool{false, true} {
		for _, trouble := range []bool{false, true} {
			for _, mn := range []int{1, 5} {
				for _, th := range thresholds {
					if *wordCV {
						settings = append(settings, setting{th, mn, trouble, weakOther})
					}
				}
			}
		}
	}
	for _, k := range ks {
		base := 0
		right := make([]int, len(settings))
		fired := make([]int, len(settings))
		// The model alone, on every report: how often its cause is right
		// above each threshold.
		cover, correct := make([]int, len(thresholds)), make([]int, len(thresholds))
		for rf := range folds * repeats {
			fold, rep := rf%folds, rf/folds
			if fold == 0 {
				// Stratified folds: by cause, then in an order of this repeat's.
				key := func(r corpus.Report) uint64 {
					h := fnv.New64a()
					fmt.Fprintf(h, "%d %s", rep, r.Name)
					return h.Sum64()
				}
				sort.SliceStable(reports, func(a, b int) bool {
					if reports[a].Cause != reports[b].Cause {
						return reports[a].Cause < reports[b].Cause
					}
					return key(reports[a]) < key(reports[b])
				})
			}
			var train []wordmodel.Doc
			var test []corpus.Report
			for i, r := range reports {
				if i%folds == fold {
					test = append(test, r)
				} else {
					train = append(train, wordmodel.Doc{Cause: string(r.Cause), Text: r.Text})
				}
			}
			m := wordmodel.Train(train, k, wordmodel.DefaultMinDocs)
			for _, r := range test {
				var without gpu.Report
				var open [2]gpu.Report
				withWords(wordSettings{}, func() { without = diagnoseText(t, r.Text) })
				for i := range open {
					withWords(wordSettings{on: true, weakOther: i == 1, model: func() *wordmodel.Model { return m }}, func() { open[i] = diagnoseText(t, r.Text) })
				}
				first := func(rep gpu.Report) gpu.Cause {
					if len(rep.Findings) == 0 {
						return "(none)"
					}
					return rep.Findings[0].Cause
				}
				if first(without) == r.Cause {
					base++
				}
				pr := m.Predict(r.Text)
				for i, th := range thresholds {
					if pr.Confidence >= th {
						cover[i]++
						if pr.Cause == string(r.Cause) {
							correct[i]++
						}
					}
				}
				var gate [2]bool
				for i, o := range open {
					gate[i] = len(o.Findings) > 0 && strings.HasPrefix(o.Findings[0].ID, "report_words_")
				}
				trouble := hasTrouble(r.Text) != ""
				for i, s := range settings {
					got := first(without)
					if gate[b2i(s.weakOther)] && pr.Confidence >= s.th && pr.Features >= s.min && (!s.trouble || trouble) {
						got = gpu.Cause(pr.Cause)
						fired[i]++
					}
					if got == r.Cause {
						right[i]++
					}
				}
			}
		}
		n := float64(len(reports) * repeats)
		var lines []string
		lines = append(lines, fmt.Sprintf("k=%d, %d× %d-fold: without the fallback %.2f%% (%d/%d)", k, repeats, folds, 100*float64(base)/n, base, int(n)))
		for i, s := range settings {
			lines = append(lines, fmt.Sprintf("  weak-other %-5v, trouble words %-5v, ≥%d words, threshold %.3f: %.2f%% (%d right, fallback fired %d)",
				s.weakOther, s.trouble, s.min, s.th, 100*float64(right[i])/n, right[i], fired[i]))
			if k == wordmodel.DefaultK && s.th == words.threshold && s.min == words.minWords && s.trouble == words.trouble && s.weakOther == words.weakOther && right[i] < base {
				t.Errorf("the fallback's settings lose reports under cross-validation: %d right, %d without it", right[i], base)
			}
		}
		lines = append(lines, "  the model alone on every report (threshold: share kept, right among them):")
		for i, th := range thresholds {
			lines = append(lines, fmt.Sprintf("    %.3f: %4d/%d kept, %.1f%% right", th, cover[i], int(n), 100*float64(correct[i])/float64(max(cover[i], 1))))
		}
		t.Log(strings.Join(lines, "\n"))
	}
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
				if strings.HasPrefix(fd.ID, "report_words_") {
					t.Errorf("%s, first %d lines: %s: %v", filepath.Base(f), n, fd.Title, fd.Evidence)
				}
			}
		}
	}
}
