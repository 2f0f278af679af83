package data

import (
	"fmt"
	"sort"
	"strings"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
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

// String is the problem in one line, with names from the user's files
// escaped (internal/printable): a file or class name can neither break the
// line nor drive the terminal.
func (p Problem) String() string {
	where := p.File
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if where != "" {
		where += ": "
	}
	return printable.String(fmt.Sprintf("%s: %s%s (fix: %s)", p.Severity, where, p.Message, p.Fix))
}

// kind is what makes two problems the same kind for the per-kind cap (see
// problemKind).
func (p Problem) kind() string { return problemKind(p.Severity, p.Fix) }

// problemKind is the kind of a problem: its severity and its fix, without
// the fix's numbers. Messages name files, classes and values; the fix says
// what to do, and the same fix is the same kind.
func problemKind(severity, fix string) string {
	return severity + ": " + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, fix)
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
	// Omitted counts the problems beyond MaxPerKind of one kind, which are
	// counted, not listed: kind (severity and fix) → count.
	Omitted map[string]int `json:"omitted,omitempty"`
	// listed counts the listed problems of each kind.
	listed map[string]int
}

// MaxPerKind is the most problems of one kind a lint lists; the rest are
// counted in Omitted, so a dataset of a million broken files gives a
// report of a few lines.
const MaxPerKind = 20

// maxPerKind is the cap inside one label file (LintYOLOLabels).
const maxPerKind = MaxPerKind

func newLint(format string) *Lint {
	return &Lint{Format: format, Counts: map[string]map[string]int{}, Images: map[string]int{}, Omitted: map[string]int{}, listed: map[string]int{}}
}

// add lists p, or counts it when MaxPerKind of its kind are listed.
func (l *Lint) add(p Problem) {
	if l.listed == nil {
		l.listed, l.Omitted = map[string]int{}, map[string]int{}
	}
	k := p.kind()
	if l.listed[k] >= MaxPerKind {
		l.Omitted[k]++
		return
	}
	l.listed[k]++
	l.Problems = append(l.Problems, p)
}

// full says whether problems of this kind (see problemKind) are only
// counted now, so a caller with many of them can skip writing each
// message: it calls drop instead of add.
func (l *Lint) full(kind string) bool { return l.listed[kind] >= MaxPerKind }

// drop counts n problems of a kind that is full.
func (l *Lint) drop(kind string, n int) {
	if l.Omitted == nil {
		l.Omitted = map[string]int{}
	}
	l.Omitted[kind] += n
}

// ErrorCount counts the errors, omitted ones included.
func (l *Lint) ErrorCount() int {
	n := len(l.Errors())
	for k, c := range l.Omitted {
		if strings.HasPrefix(k, LintError+":") {
			n += c
		}
	}
	return n
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
// then the problems grouped by kind, each group followed by how many more
// of its kind were counted. Names are escaped.
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
			if len(parts) == 12 {
				parts = append(parts, fmt.Sprintf("… (%d more)", len(l.Classes)-12))
				break
			}
			parts = append(parts, fmt.Sprintf("%s=%d", printable.String(c), l.Counts[s][c]))
		}
		fmt.Fprintf(&b, "  %-6s %6d %s: %s\n", s, l.Images[s], plural.Noun(l.Images[s], "image"), strings.Join(parts, " "))
	}
	if l.MaxW > 0 {
		fmt.Fprintf(&b, "  sizes  %dx%d to %dx%d\n", l.MinW, l.MinH, l.MaxW, l.MaxH)
	}
	l.writeProblems(&b)
	return b.String()
}

// writeProblems writes the problems grouped by kind, in the order each
// kind first appeared.
func (l *Lint) writeProblems(b *strings.Builder) {
	var order []string
	groups := map[string][]Problem{}
	for _, p := range l.Problems {
		k := p.kind()
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	for _, k := range order {
		for _, p := range groups[k] {
			b.WriteString("  " + p.String() + "\n")
		}
		if n := l.Omitted[k]; n > 0 {
			sev := groups[k][0].Severity
			fmt.Fprintf(b, "  … and %s more %s of this kind (fix: %s)\n", thousands(n), plural.Noun(n, sev), printable.String(groups[k][0].Fix))
		}
	}
}

// thousands writes n with commas: 19,980.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
