package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCatalogue checks every entry: it compiles, has a public source,
// matches its own example, and its cheap pre-test (needles) does not hide
// the example.
func TestCatalogue(t *testing.T) {
	c := Default()
	if len(c.Signatures) < 150 {
		t.Errorf("%d signatures; the catalogue must hold at least 150", len(c.Signatures))
	}
	for _, s := range c.Signatures {
		if !strings.HasPrefix(s.Source, "https://") {
			t.Errorf("%s: source %q is not a public URL", s.ID, s.Source)
		}
		// Findings read "The report shows <title>".
		if strings.HasPrefix(strings.ToLower(s.Title), "the report") {
			t.Errorf("%s: title %q would read \"The report shows the report …\"", s.ID, s.Title)
		}
		if s.Example == "" {
			t.Errorf("%s: no example", s.ID)
			continue
		}
		hits := c.Match(s.Example)
		found := false
		for _, h := range hits {
			found = found || h.ID == s.ID
		}
		if !found {
			t.Errorf("%s: does not match its example %q", s.ID, s.Example)
		}
	}
}

// TestQuietOnHealthyReports: the reports of a working CUDA 13 machine
// (nvidia-smi, nvidia-smi -q, collect_env, nvcc and pip list) hold no
// error text.
func TestQuietOnHealthyReports(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "healthy", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no healthy reports in ../testdata/healthy")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range Default().Match(string(b)) {
			t.Errorf("%s: %s fires on %q", filepath.Base(f), h.ID, h.Line)
		}
	}
}

func TestParseRejects(t *testing.T) {
	bad := map[string]string{
		"no id":        "- cause: other\n  strength: weak\n  title: x\n  patterns: ['x']\n",
		"bad cause":    "- id: a\n  cause: gremlins\n  strength: weak\n  title: x\n  patterns: ['x']\n",
		"bad strength": "- id: a\n  cause: other\n  strength: huge\n  title: x\n  patterns: ['x']\n",
		"bad regexp":   "- id: a\n  cause: other\n  strength: weak\n  title: x\n  patterns: ['(x']\n",
		"bad group":    "- id: a\n  cause: other\n  strength: weak\n  title: x\n  patterns: ['(?P<foo>x)']\n",
		"twice":        "- id: a\n  cause: other\n  strength: weak\n  title: x\n  patterns: ['x']\n- id: a\n  cause: other\n  strength: weak\n  title: x\n  patterns: ['y']\n",
		"placeholder":  "- id: a\n  cause: other\n  strength: weak\n  title: 'sm_{sm}'\n  patterns: ['sm_(?P<sm>\\d+)', 'no sm here']\n",
	}
	for name, y := range bad {
		if _, err := Parse([]byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNeedles(t *testing.T) {
	tests := map[string][]string{
		`The NVIDIA driver on your system is too old \(found version (?P<driver_cuda_int>\d+)\)`: {"the nvidia driver on your system is too old (found version "},
		`CUDA out of memory|OutOfMemoryError`:                                                    {"cuda out of memory", "outofmemoryerror"},
		`sm_\d+`:                                                                                 {"sm_"},
		`a\d+`:                                                                                   nil, // too short to be worth it
		`(a|bcde)fgh`:                                                                            {"fgh"},
		`x+libcudnn\S*\.so`:                                                                      {"libcudnn"},
	}
	for p, want := range tests {
		got := needles(p)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("needles(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestMatchValues(t *testing.T) {
	hits := Default().Match("RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver")
	for _, h := range hits {
		if h.Values["driver_cuda_int"] == "10010" && h.Strength == Strong {
			return
		}
	}
	t.Fatalf("no strong hit with driver_cuda_int=10010: %+v", hits)
}

// TestTitleValues: a title shows the values its match took, never a
// placeholder (the sm_120 of an RTX 5090 report, not "sm_XX").
func TestTitleValues(t *testing.T) {
	for _, s := range Default().Signatures {
		if strings.Contains(s.Title, "XX") || strings.Contains(s.Title, "_NN") {
			t.Errorf("%s: title %q shows a placeholder a person cannot read; name the value ({sm})", s.ID, s.Title)
		}
	}
	hits := Default().Match("/torch/cuda/__init__.py:235: UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.")
	for _, h := range hits {
		if h.ID != "torch_sm_not_compatible" {
			continue
		}
		if !strings.Contains(h.Title, "sm_120") || strings.Contains(h.Title, "{") {
			t.Errorf("title %q", h.Title)
		}
		if h.Values["gpu_name"] != "NVIDIA GeForce RTX 5090" {
			t.Errorf("gpu_name %q", h.Values["gpu_name"])
		}
		return
	}
	t.Fatalf("torch_sm_not_compatible not found: %+v", hits)
}

func BenchmarkMatch100KB(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 100_000 {
		sb.WriteString("2026-11-23 09:16:03.123 I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized\n")
		sb.WriteString("  File \"/home/user/venv/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n")
	}
	text := sb.String()
	c := Default()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Match(text)
	}
}

// TestWindowsFindWhatAFullScanFinds: matching around the literals finds
// the same signatures as running every pattern over the whole text, on
// every real report of the corpus.
func TestWindowsFindWhatAFullScanFinds(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "corpus", "tuning", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	c := Default()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		var want []string
		for _, s := range c.Signatures {
			for _, re := range s.res {
				if re.MatchString(text) {
					want = append(want, s.ID)
					break
				}
			}
		}
		var got []string
		for _, h := range c.Match(text) {
			got = append(got, h.ID)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: windows found %v, a full scan %v", filepath.Base(f), got, want)
		}
	}
}

// TestPattern: a Pattern finds what its regexp finds on the whole text,
// searching only around its needles.
func TestPattern(t *testing.T) {
	filler := strings.Repeat("nothing to see here\n", 200)
	text := filler + "first: my laptop has no nvidia gpu\n" + filler + "second: this pc has no\ndedicated gpu\n" + filler
	for _, c := range []struct {
		pattern string
		needles []string
		derived bool
	}{
		{pattern: `(?:laptop|pc) has no\s+(?:nvidia|dedicated)`, derived: true},
		{pattern: `(?P<who>laptop|pc) has no\s+(?P<what>nvidia|dedicated)`, needles: []string{"has no"}},
		{pattern: `no\n(dedicated)`, derived: true}, // spans lines
		{pattern: `\b\w+ [gn]pu\b`},                 // no needles: the whole text
	} {
		p := MustPattern(c.pattern, c.needles...)
		if p.HasNeedles() != (c.derived || c.needles != nil) {
			t.Errorf("%s: needles %q", c.pattern, p.needles)
		}
		re := regexp.MustCompile(c.pattern)
		if got, want := p.FindAllIndex(text, -1), re.FindAllStringIndex(text, -1); !slices.EqualFunc(got, want, slices.Equal) || len(want) == 0 {
			t.Errorf("%s: all %v, want %v", c.pattern, got, want)
		}
		if got, want := p.FindAllIndex(text, 1), re.FindAllStringIndex(text, 1); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: first %v, want %v", c.pattern, got, want)
		}
		if got, want := p.FindStringSubmatch(text), re.FindStringSubmatch(text); !slices.Equal(got, want) {
			t.Errorf("%s: submatch %q, want %q", c.pattern, got, want)
		}
		if p.MatchString(filler) || p.May(filler) && p.HasNeedles() {
			t.Errorf("%s: matches the filler", c.pattern)
		}
	}
}
