package data

import (
	"fmt"
	"sort"
	"strings"
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
	listed  map[string]int // problems listed, per kind
}

const maxPerKind = 20

func newLint(format string) *Lint {
	return &Lint{Format: format, Counts: map[string]map[string]int{}, Images: map[string]int{}, dropped: map[string]int{}, listed: map[string]int{}}
}

// problemKind is what problems of one kind share: the severity and the
// message up to its first number or quote.
func problemKind(severity, message string) string {
	if i := strings.IndexAny(message, "0123456789\""); i >= 0 {
		message = message[:i]
	}
	return severity + message
}

func (l *Lint) add(p Problem) {
	kind := problemKind(p.Severity, p.Message)
	if l.listed == nil {
		l.listed, l.dropped = map[string]int{}, map[string]int{}
	}
	if l.listed[kind] >= maxPerKind {
		l.dropped[kind]++
		return
	}
	l.listed[kind]++
	l.Problems = append(l.Problems, p)
}

// full says whether problems of this kind (see problemKind) are only
// counted now, so a caller with many of them can skip writing each
// message: it calls drop instead of add.
func (l *Lint) full(kind string) bool { return l.listed[kind] >= maxPerKind }

// drop counts n problems of a kind that is full.
func (l *Lint) drop(kind string, n int) {
	if l.dropped == nil {
		l.dropped = map[string]int{}
	}
	l.dropped[kind] += n
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
	fmt.Fprintf(&b, "format: %s, %d classes\n", l.Format, len(l.Classes))
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
		fmt.Fprintf(&b, "  %-6s %6d images: %s\n", s, l.Images[s], strings.Join(parts, " "))
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
