package catalog

import (
	"regexp"
	"strings"
)

// Pattern is a regexp over a lower-cased report that runs only around the
// literals one of which every match holds (its needles): on their line and
// the two lines either side of it, or for a pattern that spans lines a window of whole
// lines, as the catalogue's own patterns do. A long paste costs a scan for
// the needles, and the regexp only where they are; a report without them
// costs nothing more. Patterns without needles run on the whole text.
//
// The words the doctor and the paste reader look for in prose ("I don't
// have an NVIDIA GPU", "inside a docker container") are Patterns.
type Pattern struct {
	re      *regexp.Regexp
	needles []string
	lines   bool
}

// MustPattern compiles a pattern for lower-cased text. needles, when
// given, are its literals one of which every match holds (lower-case);
// when not, they are derived from the pattern (see Needles), and a pattern
// without any runs on the whole text. Given needles that a match may lack
// lose that match: TestPatternNeedles in the packages that give them
// checks them on the corpus.
func MustPattern(pattern string, needles ...string) *Pattern {
	p := &Pattern{re: regexp.MustCompile(pattern), lines: spansLines(pattern)}
	if len(needles) > 0 {
		p.needles = needles
	} else {
		p.needles = Needles(pattern)
	}
	return p
}

// Regexp is the pattern's regexp, which runs on the whole text.
func (p *Pattern) Regexp() *regexp.Regexp { return p.re }

// String is the pattern's source.
func (p *Pattern) String() string { return p.re.String() }

// HasNeedles says whether the pattern runs only around its needles.
func (p *Pattern) HasNeedles() bool { return p.needles != nil }

// May says whether low holds one of the pattern's needles (or it has
// none): whether it may match at all.
func (p *Pattern) May(low string) bool {
	if p.needles == nil {
		return true
	}
	for _, n := range p.needles {
		if strings.Contains(low, n) {
			return true
		}
	}
	return false
}

// each calls f with the windows of low where a match may be, in text
// order, each with its offset, until f returns false. A window is the
// span of a needle's occurrence (span) joined with the spans of the
// occurrences that reach into it, up to maxWindow bytes; windows may
// overlap by a span, so f is told where the last one ended (done): a
// match that ends there or before was in it.
func (p *Pattern) each(low string, f func(lo int, s string, done int) bool) {
	if p.needles == nil {
		f(0, low, 0)
		return
	}
	// Where each needle occurs next.
	next := make([]int, len(p.needles))
	for k, n := range p.needles {
		next[k] = index(low, n, 0)
	}
	earliest := func() int {
		k := -1
		for i, at := range next {
			if at >= 0 && (k < 0 || at < next[k]) {
				k = i
			}
		}
		return k
	}
	lc := &lineCache{s: low}
	done := 0
	for {
		k := earliest()
		if k < 0 {
			return
		}
		lo, hi := p.span(lc, next[k], len(p.needles[k]))
		for {
			// Occurrences whose span the window holds are searched.
			for i, n := range p.needles {
				for next[i] >= 0 {
					if _, h := p.span(lc, next[i], len(n)); h > hi {
						break
					}
					next[i] = index(low, n, next[i]+1)
				}
			}
			k = earliest()
			if k < 0 || hi-lo >= maxWindow {
				break
			}
			l, h := p.span(lc, next[k], len(p.needles[k]))
			if l > hi {
				break
			}
			hi = h
		}
		if !f(lo, low[lo:hi], done) {
			return
		}
		done = hi
	}
}

// span is where a match holding the needle at at (n bytes long) may be:
// its line and the beside lines either side, or for a pattern that spans
// lines the whole lines within window bytes.
func (p *Pattern) span(lc *lineCache, at, n int) (lo, hi int) {
	size := len(lc.s)
	if p.lines {
		lo, _ = lc.bounds(max(0, at-window))
		_, hi = lc.bounds(min(size, at+n+window))
		return lo, hi
	}
	lo, _ = lc.bounds(at)
	_, hi = lc.bounds(at + n)
	for range beside {
		lo, _ = lc.bounds(max(0, lo-1))
		_, hi = lc.bounds(min(size, hi+1))
	}
	return lo, hi
}

// lineCache remembers the last lines whose bounds were asked for: every
// occurrence of a needle on one long line (a log without line breaks)
// asks for the same line, which is then scanned once, not once per
// occurrence.
type lineCache struct {
	s     string
	lines [8][2]int
	n     int
}

// bounds is the start of the line that holds byte i of s and the end (its
// newline, or len(s)), as lineStart and lineEnd give them.
func (c *lineCache) bounds(i int) (start, end int) {
	for k := range min(c.n, len(c.lines)) {
		if l := c.lines[k]; l[0] <= i && i <= l[1] {
			return l[0], l[1]
		}
	}
	start, end = lineStart(c.s, i), lineEnd(c.s, i)
	c.lines[c.n%len(c.lines)] = [2]int{start, end}
	c.n++
	return start, end
}

// maxWindow is how long a window grows by joining spans: regexps run
// fastest on short texts.
const maxWindow = 8 << 10

// beside is how many lines either side of a needle's line a pattern that
// keeps to its line may reach: \s may cross a line break that a forum or
// terminal added, or the blank line between an issue form's heading and
// its answer ("### TensorFlow version", "", "2.14.0").
const beside = 2

// index is where n occurs in s at or after from, or -1.
func index(s, n string, from int) int {
	from = max(from, 0)
	if from > len(s) {
		return -1
	}
	if i := strings.Index(s[from:], n); i >= 0 {
		return from + i
	}
	return -1
}

// FindSubmatchIndex is the submatch indexes of the first match in low,
// or nil.
func (p *Pattern) FindSubmatchIndex(low string) []int {
	var loc []int
	p.each(low, func(lo int, s string, _ int) bool {
		if loc = p.re.FindStringSubmatchIndex(s); loc != nil {
			for i := range loc {
				if loc[i] >= 0 {
					loc[i] += lo
				}
			}
			return false
		}
		return true
	})
	return loc
}

// FindIndex is where the first match in low is, or nil.
func (p *Pattern) FindIndex(low string) []int {
	if loc := p.FindSubmatchIndex(low); loc != nil {
		return loc[:2]
	}
	return nil
}

// MatchString says whether the pattern matches in low.
func (p *Pattern) MatchString(low string) bool { return p.FindSubmatchIndex(low) != nil }

// FindStringSubmatch is the first match in low and its groups, or nil.
func (p *Pattern) FindStringSubmatch(low string) []string {
	loc := p.FindSubmatchIndex(low)
	if loc == nil {
		return nil
	}
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = low[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

// FindAllIndex is where the first n matches in low are (all for n < 0).
func (p *Pattern) FindAllIndex(low string, n int) [][]int {
	var all [][]int
	end := 0 // where the last match ended
	p.each(low, func(lo int, s string, done int) bool {
		for _, loc := range p.re.FindAllStringIndex(s, -1) {
			if loc[1]+lo <= done || loc[0]+lo < end {
				continue // found in the window before
			}
			all = append(all, []int{loc[0] + lo, loc[1] + lo})
			end = loc[1] + lo
			if len(all) == n {
				return false
			}
		}
		return true
	})
	return all
}

// FindAllString is the first n matches in low (all for n < 0).
func (p *Pattern) FindAllString(low string, n int) []string {
	var all []string
	for _, loc := range p.FindAllIndex(low, n) {
		all = append(all, low[loc[0]:loc[1]])
	}
	return all
}
