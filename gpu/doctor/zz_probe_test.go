package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gpuwizard/gpu/internal/corpus"
	"gpuwizard/gpu/internal/wordmodel"
	"gpuwizard/gpu/paste"
	"time"
)

func TestZZProbe(t *testing.T) {
	part := os.Getenv("ZZPART")
	if part == "" {
		t.Skip()
	}
	reports, _ := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
	kinds := map[string][2]int{}
	var lines []string
	for _, r := range reports {
		rep := diagnoseText(t, r.Text)
		id, cause := "(none)", "(none)"
		if len(rep.Findings) > 0 {
			id, cause = rep.Findings[0].ID, string(rep.Findings[0].Cause)
		}
		kind := "rule"
		switch {
		case strings.HasPrefix(id, "report_words_"):
			kind = "words"
		case id == "report_run_next" || id == "report_nothing_recognised" || id == "report_cuda_unavailable" || id == "(none)":
			kind = "none"
		case strings.HasPrefix(id, "report_"):
			kind = "report"
		}
		k := kinds[kind]
		k[1]++
		if cause == string(r.Cause) {
			k[0]++
		}
		kinds[kind] = k
		if os.Getenv("ZZKIND") == kind {
			lines = append(lines, fmt.Sprintf("%v %s want %s got %s (%s)", cause == string(r.Cause), r.Name, r.Cause, cause, id))
		}
	}
	sort.Strings(lines)
	t.Logf("%v\n%s", kinds, strings.Join(lines, "\n"))
}

func TestZZExplain(t *testing.T) {
	names := os.Getenv("ZZNAME")
	if names == "" {
		t.Skip()
	}
	for _, part := range []string{"tuning"} {
		reports, _ := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
		for _, r := range reports {
			if !strings.Contains(names, r.Name) {
				continue
			}
			var train []wordmodel.Doc
			for _, o := range reports {
				if o.Name != r.Name {
					train = append(train, wordmodel.Doc{Cause: string(o.Cause), Text: o.Text})
				}
			}
			wm := wordmodel.Train(train, wordmodel.DefaultK, wordmodel.DefaultMinDocs)
			ws := words
			ws.model = func() *wordmodel.Model { return wm }
			old := words
			words = ws
			f := paste.Parse(r.Text, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
			m := mustMatrix(t)
			f = fillFromNames(f, m)
			j := &judge{f: f, m: m}
			j.visible = j.visibleGPUs()
			j.computeAdvice()
			for _, ru := range rules {
				if ru.name == "report" {
					break
				}
				ru.run(j)
			}
			j.reportSituations()
			j.reportRules()
			rd := newReading(f)
			var lines []string
			for _, c := range j.cues(rd) {
				lines = append(lines, fmt.Sprintf("   cue %s %+.1f %s", c.cause, c.weight, c.because))
			}
			for _, l := range j.weigh(rd, j.weakFindings(), hasTrouble(f.Paste.Text))[:4] {
				lines = append(lines, fmt.Sprintf("   %s %.2f", l.cause, l.score))
			}
			rep := diagnoseText(t, r.Text)
			words = old
			var gn []string
			for _, g := range f.NVML.GPUs {
				gn = append(gn, g.Name+"/"+g.CC)
			}
			t.Logf("%s want %s; GPUs %v OS %q; first %s\n%s", r.Name, r.Cause, gn, f.Host.OS, rep.Findings[0].ID, strings.Join(lines, "\n"))
		}
	}
}

func TestZZText(t *testing.T) {
	text := os.Getenv("ZZTEXT")
	if text == "" {
		t.Skip()
	}
	f := paste.Parse(text, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	m := mustMatrix(t)
	f = fillFromNames(f, m)
	j := &judge{f: f, m: m}
	j.visible = j.visibleGPUs()
	j.computeAdvice()
	for _, ru := range rules {
		if ru.name == "report" {
			break
		}
		ru.run(j)
	}
	j.reportSituations()
	j.reportRules()
	rd := newReading(f)
	var lines []string
	for _, c := range j.cues(rd) {
		lines = append(lines, fmt.Sprintf("   cue %s %+.1f %s", c.cause, c.weight, c.because))
	}
	for _, l := range j.weigh(rd, j.weakFindings(), hasTrouble(f.Paste.Text))[:4] {
		lines = append(lines, fmt.Sprintf("   %s %.2f", l.cause, l.score))
	}
	rep := diagnoseText(t, text)
	t.Logf("trouble %q; first %s\n%s", hasTrouble(text), rep.Findings[0].ID, strings.Join(lines, "\n"))
}

func TestZZTrouble(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "healthy", "*.txt"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		t.Logf("%s: %q", f, hasTrouble(string(b)))
	}
}

func TestZZGPUNames(t *testing.T) {
	if os.Getenv("ZZNAMES") == "" {
		t.Skip()
	}
	m := mustMatrix(t)
	for _, n := range []string{"Tesla K40m", "K80", "GTX 1650", "GTX 1660 Ti", "RTX 4060 Laptop GPU", "RTX 3050 Ti Laptop", "MX450", "Quadro P2000", "RTX A2000", "A10G", "L40S", "H100 80GB HBM3", "RTX 2080 Super", "Titan RTX", "GTX 960M", "GTX 750 Ti", "RTX 5070 Ti", "RTX PRO 6000 Blackwell", "GTX 1050", "Tesla T4", "Tesla P100-PCIE-16GB", "V100-SXM2-32GB", "RTX 4090 D", "GeForce 940MX", "MX150", "GTX 980 Ti", "Quadro M4000", "RTX A6000", "RTX 6000 Ada", "GTX 1070 Max-Q", "RTX 3060 Laptop GPU", "rtx 3090", "3090", "4090", "gtx1080", "RTX5090", "RTX 5080", "Tesla V100", "A100", "GTX 1080ti", "1080 Ti", "RTX 2060", "GT 730", "Quadro K2200", "Tesla M60", "RTX 3070", "GTX 1660 SUPER"} {
		f := paste.Parse("My GPU is an NVIDIA GeForce "+n+" and torch.cuda.is_available() is False", time.Now())
		name := ""
		if len(f.NVML.GPUs) > 0 {
			name = f.NVML.GPUs[0].Name
		}
		t.Logf("%-26s → %-30q cc %q (name alone: %q)", n, name, m.CCForName(name), m.CCForName(n))
	}
}
