package data

import (
	"fmt"
	"sort"
	"strings"

	"gpuwizard/internal/plural"
)

// Severity of a lint problem.
const (
	LintError   = "error"   // training cannot use the dataset as it is
	LintWarning = "warning" // training works but the result will suffer
)

// Problem is one thing wrong with a dataset, with where and how to fix it.
type Problem struct {
	Severity string `json:"severity"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
}

func (p Problem) String() string {
	where := p.File
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if where != "" {
		where += ": "
	}
	return fmt.Sprintf("%s: %s%s (fix: %s)", p.Severity, where, p.Message, p.Fix)
}

// Lint is the report shown before training: what the dataset holds and
// what is wrong with it.
type Lint struct {
	Format   string                    `json:"format"`
	Classes  []string                  `json:"classes"`
	Counts   map[string]map[string]int `json:"counts"` // split → class → images (detection: boxes)
	Images   map[string]int            `json:"images"` // split → images
	MinW     int                       `json:"min_width,omitempty"`
	MinH     int                       `json:"min_height,omitempty"`
	MaxW     int                       `json:"max_width,omitempty"`
	MaxH     int                       `json:"max_height,omitempty"`
	Problems []Problem                 `json:"problems"`
	// problems beyond this many of one kind are counted, not listed
	dropped map[string]int
}

const maxPerKind = 20

func newLint(format string) *Lint {
	return &Lint{Format: format, Counts: map[string]map[string]int{}, Images: map[string]int{}, dropped: map[string]int{}}
}

func (l *Lint) add(p Problem) {
	kind := p.Severity + ": " + p.Message // "warning: image …": the kind, as Summary shows it
	if i := strings.IndexAny(kind, "0123456789\""); i > 0 {
		kind = kind[:i]
	}
	n := 0
	for _, q := range l.Problems {
		k := q.Severity + ": " + q.Message
		if i := strings.IndexAny(k, "0123456789\""); i > 0 {
			k = k[:i]
		}
		if k == kind {
			n++
		}
	}
	if n >= maxPerKind {
		l.dropped[kind]++
		return
	}
	l.Problems = append(l.Problems, p)
}

func (l *Lint) size(w, h int) {
	if l.MinW == 0 || w < l.MinW {
		l.MinW = w
	}
	if l.MinH == 0 || h < l.MinH {
		l.MinH = h
	}
	l.MaxW, l.MaxH = max(l.MaxW, w), max(l.MaxH, h)
}

func (l *Lint) count(split, class string) {
	if l.Counts[split] == nil {
		l.Counts[split] = map[string]int{}
	}
	l.Counts[split][class]++
}

// MaxImbalance is the largest ratio between the biggest and the smallest
// class (images, or boxes for detection) that passes without a warning.
const MaxImbalance = 10

// imbalance warns when the biggest class of split has more than
// MaxImbalance times the items of the smallest non-empty one (empty classes
// are reported on their own).
func (l *Lint) imbalance(file, split, items string) {
	counts := l.Counts[split]
	big, small := "", ""
	for _, c := range l.Classes {
		n := counts[c]
		if n == 0 {
			continue
		}
		if big == "" || n > counts[big] {
			big = c
		}
		if small == "" || n < counts[small] {
			small = c
		}
	}
	if big == "" || counts[big] <= MaxImbalance*counts[small] {
		return
	}
	l.add(Problem{Severity: LintWarning, File: file, Message: fmt.Sprintf("strong class imbalance in %s: %q has %d %s, %q only %d (%.0f×, more than %d×): the model will favour %q",
		split, big, counts[big], items, small, counts[small], float64(counts[big])/float64(counts[small]), MaxImbalance, big),
		Fix: fmt.Sprintf("add %s to the small classes (or drop some from the big ones) until the ratio is at most %d", items, MaxImbalance)})
}

// Errors returns the problems that stop training.
func (l *Lint) Errors() []Problem {
	var out []Problem
	for _, p := range l.Problems {
		if p.Severity == LintError {
			out = append(out, p)
		}
	}
	return out
}

// Summary is the lint report as text: counts per split and class, sizes,
// then the problems.
func (l *Lint) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s, %s\n", l.Format, plural.Count(len(l.Classes), "class"))
	splits := make([]string, 0, len(l.Counts))
	for s := range l.Counts {
		splits = append(splits, s)
	}
	sort.Strings(splits)
	for _, s := range splits {
		var parts []string
		for _, c := range l.Classes {
			parts = append(parts, fmt.Sprintf("%s=%d", c, l.Counts[s][c]))
		}
		if len(parts) > 12 {
			parts = append(parts[:12], fmt.Sprintf("… (%d more)", len(parts)-12))
		}
		fmt.Fprintf(&b, "  %-6s %6d %s: %s\n", s, l.Images[s], plural.Noun(l.Images[s], "image"), strings.Join(parts, " "))
	}
	if l.MaxW > 0 {
		fmt.Fprintf(&b, "  sizes  %dx%d to %dx%d\n", l.MinW, l.MinH, l.MaxW, l.MaxH)
	}
	for _, p := range l.Problems {
		b.WriteString("  " + p.String() + "\n")
	}
	for k, n := range l.dropped {
		fmt.Fprintf(&b, "  … and %d more like %q\n", n, strings.TrimSpace(k))
	}
	return b.String()
}
