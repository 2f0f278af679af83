// Package catalog is the doctor's signature catalogue: the error texts of
// real reports (signatures.yaml, embedded), each with the root cause it is
// evidence for, how strong that evidence is, the values it carries and a
// public thread where it appears. Match finds them in a text.
package catalog

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"gpuwizard/gpu"
)

//go:embed signatures.yaml
var embedded []byte

// ErrCatalog is returned for a catalogue that does not hold together.
var ErrCatalog = errors.New("catalog")

// Strengths of evidence.
const (
	Weak   = 1 // a symptom with several causes
	Medium = 2 // usually this cause
	Strong = 3 // the text alone proves the cause
)

// Values a pattern may extract, by named group.
var valueNames = []string{"driver_version", "driver_cuda", "driver_cuda_int", "cuda_version", "torch_version",
	"tf_version", "cudnn_runtime", "cudnn_compiled", "sm", "cc", "gpu_name", "library", "ordinal", "pid", "mib"}

// Signature is one error text and what it is evidence for.
type Signature struct {
	ID         string     `yaml:"id"`
	Cause      gpu.Cause  `yaml:"cause"`
	Strength   string     `yaml:"strength"`
	SymptomOf  []string   `yaml:"symptom_of"`
	Frameworks []string   `yaml:"frameworks"`
	Title      string     `yaml:"title"`
	Patterns   []string   `yaml:"patterns"`
	Source     string     `yaml:"source"`
	Example    string     `yaml:"example"`
	Fix        []gpu.Step `yaml:"fix"`

	res     []*regexp.Regexp
	needles [][]string // per pattern: lower-case literals one of which every match contains; nil: none known
	ids     [][]int    // per pattern: its needles' numbers in the catalogue's needle index
	lines   []bool     // per pattern: a match may span lines (the pattern names \n or (?s))
	weight  int
}

// Weight is the signature's strength as a number (Weak, Medium, Strong).
func (s *Signature) Weight() int { return s.weight }

// Catalog is the compiled catalogue.
type Catalog struct {
	Signatures []*Signature
	byID       map[string]*Signature
	ix         needleIndex
}

// Default returns the embedded catalogue, compiled once.
var Default = sync.OnceValue(func() *Catalog {
	c, err := Parse(embedded)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return c
})

// Parse reads and compiles a catalogue.
func Parse(data []byte) (*Catalog, error) {
	var sigs []*Signature
	if err := yaml.Unmarshal(data, &sigs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCatalog, err)
	}
	c := &Catalog{byID: map[string]*Signature{}}
	for i, s := range sigs {
		where := fmt.Sprintf("entry %d (%s)", i+1, s.ID)
		switch {
		case s.ID == "":
			return nil, fmt.Errorf("%w: %s: no id", ErrCatalog, where)
		case c.byID[s.ID] != nil:
			return nil, fmt.Errorf("%w: %s: the id is used twice", ErrCatalog, where)
		case !slices.Contains(gpu.Causes, s.Cause):
			return nil, fmt.Errorf("%w: %s: unknown cause %q", ErrCatalog, where, s.Cause)
		case len(s.Patterns) == 0:
			return nil, fmt.Errorf("%w: %s: no patterns", ErrCatalog, where)
		case s.Title == "":
			return nil, fmt.Errorf("%w: %s: no title", ErrCatalog, where)
		}
		switch s.Strength {
		case "weak":
			s.weight = Weak
		case "medium":
			s.weight = Medium
		case "strong":
			s.weight = Strong
		default:
			return nil, fmt.Errorf("%w: %s: strength %q is not weak, medium or strong", ErrCatalog, where, s.Strength)
		}
		for _, c := range s.SymptomOf {
			if !slices.Contains(gpu.Causes, gpu.Cause(c)) {
				return nil, fmt.Errorf("%w: %s: symptom_of names unknown cause %q", ErrCatalog, where, c)
			}
		}
		for _, p := range s.Patterns {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrCatalog, where, err)
			}
			for _, n := range re.SubexpNames() {
				if n != "" && !slices.Contains(valueNames, n) {
					return nil, fmt.Errorf("%w: %s: group %q is not a known value name", ErrCatalog, where, n)
				}
			}
			for _, m := range placeholderRE.FindAllStringSubmatch(s.Title, -1) {
				if !slices.Contains(re.SubexpNames(), m[1]) {
					return nil, fmt.Errorf("%w: %s: the title names {%s}, but the pattern %q has no group of that name to fill it (add (?P<%s>...) or take it out of the title)", ErrCatalog, where, m[1], p, m[1])
				}
			}
			s.res = append(s.res, re)
			s.needles = append(s.needles, needles(p))
			s.lines = append(s.lines, spansLines(p))
		}
		c.Signatures = append(c.Signatures, s)
		c.byID[s.ID] = s
	}
	for _, s := range c.Signatures {
		for _, ns := range s.needles {
			var ids []int
			for _, n := range ns {
				ids = append(ids, c.ix.add(n))
			}
			s.ids = append(s.ids, ids)
		}
	}
	return c, nil
}

// ByID returns a signature.
func (c *Catalog) ByID(id string) (*Signature, bool) {
	s, ok := c.byID[id]
	return s, ok
}

// Match finds the catalogue's signatures in text, in catalogue order, each
// once, with the first line that matched and the values its groups took.
// A pattern with literals runs only around where they occur, so a long
// report costs about its length, not its length times the catalogue.
func (c *Catalog) Match(text string) []gpu.SignatureHit {
	lower := asciiLower(text)
	occ := c.ix.scan(lower)
	var hits []gpu.SignatureHit
	for _, s := range c.Signatures {
		for i, re := range s.res {
			loc := find(re, text, s.needles[i], s.ids[i], occ, s.lines[i])
			if loc == nil {
				continue
			}
			h := gpu.SignatureHit{ID: s.ID, Cause: s.Cause, Title: s.Title, Line: lineAt(text, loc[0]), Strength: s.weight}
			for g, name := range re.SubexpNames() {
				if name != "" && loc[2*g] >= 0 {
					if h.Values == nil {
						h.Values = map[string]string{}
					}
					h.Values[name] = text[loc[2*g]:loc[2*g+1]]
				}
			}
			h.Title = fillTitle(s.Title, h.Values)
			hits = append(hits, h)
			break
		}
	}
	return hits
}

// placeholderRE is a value named in a title: "the GPU's architecture
// (sm_{sm})". Parse checks that every pattern of the signature has the
// group that fills it.
var placeholderRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// fillTitle puts the values a match took into a title's placeholders; a
// group that matched nothing (an optional one) leaves "?".
func fillTitle(title string, values map[string]string) string {
	if !strings.Contains(title, "{") {
		return title
	}
	return placeholderRE.ReplaceAllStringFunc(title, func(ph string) string {
		v := strings.TrimSpace(values[ph[1:len(ph)-1]])
		if v == "" {
			return "?"
		}
		if len(v) > 60 {
			v = strings.ToValidUTF8(v[:60], "") + "…"
		}
		return v
	})
}

// window is how far around a literal a match that spans lines may reach.
const window = 2048

// find returns the submatch indexes of the first match of re in text that
// contains one of needles (all of text without needles), searching only
// around the needles' occurrences (occ[ids[k]] for needles[k]): their
// line, or for a pattern that spans lines a window of whole lines.
func find(re *regexp.Regexp, text string, needles []string, ids []int, occ [][]int, spans bool) []int {
	if needles == nil {
		return re.FindStringSubmatchIndex(text)
	}
	var best []int
	for k, n := range needles {
		done := 0 // text before done has been searched
		from := 0 // occurrences overlapping the last one are skipped
		for _, at := range occ[ids[k]] {
			if at < from {
				continue
			}
			from = at + len(n)
			if at < done || best != nil && at >= best[0]+window {
				continue
			}
			var lo, hi int
			if spans {
				lo = lineStart(text, max(done, at-window))
				hi = lineEnd(text, min(len(text), at+len(n)+window))
			} else {
				// The needle's line and its neighbours: \s in a pattern
				// may cross a line break that a forum or terminal added.
				lo = lineStart(text, max(done, lineStart(text, at)-1))
				hi = lineEnd(text, min(len(text), lineEnd(text, at+len(n))+1))
			}
			done = hi
			if loc := re.FindStringSubmatchIndex(text[lo:hi]); loc != nil {
				for i := range loc {
					if loc[i] >= 0 {
						loc[i] += lo
					}
				}
				if best == nil || loc[0] < best[0] {
					best = loc
				}
				break
			}
		}
	}
	return best
}

func lineStart(s string, i int) int {
	for i > 0 && s[i-1] != '\n' {
		i--
	}
	return i
}

func lineEnd(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		i++
	}
	return i
}

// asciiLower lowers ASCII letters only, so that byte offsets stay those
// of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lineAt is the line of text around byte i, cut to 240 bytes.
func lineAt(text string, i int) string {
	start, end := i, i
	for start > 0 && text[start-1] != '\n' {
		start--
	}
	for end < len(text) && text[end] != '\n' {
		end++
	}
	line := strings.TrimRight(text[start:end], "\r")
	if len(line) > 240 {
		line = strings.ToValidUTF8(line[:240], "") + "…"
	}
	return strings.TrimSpace(line)
}

// Needles are the lower-case literals of which every match of pattern
// (case-insensitive) contains one: a cheap test before the regexp. Nil
// when the pattern has no literal of at least 3 bytes that every match
// needs.
func Needles(pattern string) []string { return needles(pattern) }

// needles derives from a pattern the lower-case literals of which every
// match must contain one: a cheap test before the regexp. Nil when the
// pattern has no literal of at least 3 bytes that every match needs.
func needles(pattern string) []string {
	re, err := syntax.Parse(pattern, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil
	}
	ns := required(re.Simplify())
	for _, n := range ns {
		if len(n) < 3 {
			return nil
		}
	}
	return ns
}

// required returns literals one of which every match of re contains, or
// nil.
func required(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{asciiLower(string(re.Rune))}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals join; otherwise the best single child wins.
		var best []string
		var run strings.Builder
		flush := func() {
			if run.Len() > 0 && (best == nil || literalScore(run.String()) > quality(best)) {
				best = []string{asciiLower(run.String())}
			}
			run.Reset()
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				run.WriteString(string(sub.Rune))
				continue
			}
			flush()
			if r := required(sub); r != nil && (best == nil || quality(r) > quality(best)) {
				best = r
			}
		}
		flush()
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			r := required(sub)
			if r == nil {
				return nil
			}
			all = append(all, r...)
		}
		return all
	}
	return nil
}

// spansLines says whether a pattern may match across lines: it names a
// line break (outside a negated class such as [^\n], which keeps a match
// on its line) or lets . match one.
func spansLines(p string) bool {
	return strings.Contains(negatedClass.ReplaceAllString(p, ""), `\n`) || strings.Contains(p, "(?s")
}

var negatedClass = regexp.MustCompile(`\[\^(?:\\.|[^\]\\])*\]`)

// commonLiterals are words most reports hold: a needle made of one finds
// a pattern's place all over a paste, so a rarer literal of the pattern is
// preferred.
var commonLiterals = map[string]bool{"cpu": true, "gpu": true, "cuda": true, "torch": true, "pytorch": true,
	"tensorflow": true, "nvidia": true, "error": true, "driver": true, "version": true, "device": true, "install": true}

// literalScore ranks a literal as a needle: longer is rarer, non-ASCII
// (CJK words) is rare in reports, a common word alone is frequent.
func literalScore(n string) int {
	s := len(n)
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			s++
		}
	}
	if commonLiterals[strings.ToLower(strings.TrimSpace(n))] {
		s /= 3
	}
	if strings.Contains(n, "_") {
		s += 2 // an identifier's part (sm_, cuda_): rare in prose
	}
	return s
}

// quality is how good a set of needles (one must occur) is: its worst.
func quality(ns []string) int {
	q := -1
	for _, n := range ns {
		if v := literalScore(n); q < 0 || v < q {
			q = v
		}
	}
	return q
}

// needleIndex finds every needle of the catalogue in one pass over a text:
// each position's first three bytes are tested against a bitmap of the
// needles' first three bytes, and only the few positions that pass are
// compared with the needles that start so. (Calling strings.Index once
// per needle went over a long paste some five hundred times.)
type needleIndex struct {
	needles []string
	byText  map[string]int
	byKey   map[uint32][]int // first three bytes → needle numbers
	bloom   [1 << 16 / 64]uint64
}

// add enters a needle (at least three bytes; see needles) and returns its
// number.
func (ix *needleIndex) add(n string) int {
	if id, ok := ix.byText[n]; ok {
		return id
	}
	if ix.byText == nil {
		ix.byText, ix.byKey = map[string]int{}, map[uint32][]int{}
	}
	id := len(ix.needles)
	ix.needles = append(ix.needles, n)
	ix.byText[n] = id
	k := key3(n, 0)
	ix.byKey[k] = append(ix.byKey[k], id)
	h := hash16(k)
	ix.bloom[h/64] |= 1 << (h % 64)
	return id
}

func key3(s string, i int) uint32 { return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 }

func hash16(k uint32) uint32 { return (k * 2654435761) >> 16 }

// scan returns, per needle number, where the needle occurs in lower, in
// ascending order (nil where it does not).
func (ix *needleIndex) scan(lower string) [][]int {
	occ := make([][]int, len(ix.needles))
	for i := 0; i+3 <= len(lower); i++ {
		k := key3(lower, i)
		h := hash16(k)
		if ix.bloom[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, id := range ix.byKey[k] {
			if strings.HasPrefix(lower[i:], ix.needles[id]) {
				occ[id] = append(occ[id], i)
			}
		}
	}
	return occ
}
