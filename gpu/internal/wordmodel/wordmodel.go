// Package wordmodel is the doctor's last resort: a multinomial naive Bayes
// classifier over a report's words (lower-cased tokens and the bigrams of
// neighbouring tokens on a line), which says which cause the words of a
// report point to when nothing the doctor knows was found in it.
//
// The model is small and explainable: the features are the few thousand
// words that best tell the causes apart in the training reports (chi², one
// class against the rest), and the model keeps, per feature and cause, only
// the number of training reports of that cause that hold it: integers, so
// the file is the same wherever it is generated. A prediction names the
// words that drove it.
package wordmodel

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gpuwizard/gpu/internal/corpus"
)

// MaxBytes is how much of a text the features are read from: its first and
// last halves of MaxBytes when it is longer, so that an 8 MiB paste costs
// what 1 MiB does.
const MaxBytes = 1 << 20

// Doc is one training report.
type Doc struct {
	Cause string
	Text  string
}

// Model is a trained classifier.
type Model struct {
	K       int      // features kept
	MinDocs int      // a feature is kept only when at least this many reports hold it
	Classes []string // the causes, sorted
	Docs    []int    // training reports per class
	Words   []string // the features, sorted
	Counts  [][]int  // Counts[w][c]: reports of class c holding feature w

	index map[string]int32
	logp  [][]float64 // logp[w][c] = log P(w | c)
	prior []float64
}

// visit calls fn with every feature of text, once per occurrence: each
// token, and each pair of neighbouring tokens on a line joined by a space.
// The byte slice is only valid during the call.
func visit(text string, fn func([]byte)) {
	if len(text) > MaxBytes {
		visitPart(text[:MaxBytes/2], fn)
		visitPart(text[len(text)-MaxBytes/2:], fn)
		return
	}
	visitPart(text, fn)
}

func visitPart(text string, fn func([]byte)) {
	var tok, prev, pair []byte
	tok = make([]byte, 0, 64)
	prev = make([]byte, 0, 64)
	pair = make([]byte, 0, 130)
	flush := func() {
		t := normalise(tok)
		tok = tok[:0]
		if t == nil {
			return
		}
		fn(t)
		if len(prev) > 0 {
			pair = append(append(append(pair[:0], prev...), ' '), t...)
			fn(pair)
		}
		prev = append(prev[:0], t...)
	}
	for i := 0; i < len(text); i++ {
		if (i == 0 || text[i-1] == '\n') && smiTableLine(text[i:]) {
			// nvidia-smi's table says the same words on every machine
			// (Persistence-M, Bus-Id, Disp.A, Volatile, MiB): not the
			// report's words. Its facts are read elsewhere.
			for i < len(text) && text[i] != '\n' {
				i++
			}
			flush()
			prev = prev[:0]
			continue
		}
		c := text[i]
		switch {
		case c >= 'A' && c <= 'Z':
			tok = append(tok, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '+':
			tok = append(tok, c)
		case c == '\n':
			flush()
			prev = prev[:0]
		default:
			flush()
		}
		if len(tok) > 64 { // no word is this long: a hash, base64
			tok = tok[:0]
			for i+1 < len(text) && isWordByte(text[i+1]) {
				i++
			}
		}
	}
	flush()
}

// smiTableLine says whether the line that starts rest is a line of
// nvidia-smi's table: its frame (+---, |===) or a row (| … |) with one of
// the table's own words.
func smiTableLine(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	if len(rest) < 2 || rest[0] != '|' && rest[0] != '+' {
		return false
	}
	if rest[1] == '-' || rest[1] == '=' {
		return true
	}
	if rest[0] != '|' {
		return false
	}
	line := rest
	if n := strings.IndexByte(line, '\n'); n >= 0 {
		line = line[:n]
	}
	for _, w := range smiTableWords {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// smiTableWords are words only nvidia-smi's table rows hold; "00000000:"
// starts the Bus-Id of the row that names the GPU, whose model the doctor
// reads as a fact (its architecture, against the matrix), not as words.
var smiTableWords = []string{"MiB", "Persistence-M", "Bus-Id", "Disp.A", "Volatile", "GPU-Util", "Compute M.", "MIG M.", "Pwr:Usage", "NVIDIA-SMI", "Processes:", "Process name", "GPU   GI", "ID   ID", "00000000:"}

func isWordByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '+'
}

// normalise keeps a token as a feature or returns nil: "1+cpu" (of
// "2.0.1+cpu") is "+cpu"; numbers, hex strings, single letters and very
// long tokens are dropped.
func normalise(t []byte) []byte {
	if i := bytes.IndexByte(t, '+'); i >= 0 {
		t = t[i:]
		if j := bytes.LastIndexByte(t, '+'); j > 0 {
			t = t[:j] // "c++" and such
		}
	}
	t = bytes.Trim(t, "_")
	if len(t) < 2 || len(t) > 32 {
		return nil
	}
	letters, digits, hex := 0, 0, true
	for _, c := range t {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z':
			letters++
			hex = hex && c <= 'f'
		default:
			hex = false
		}
	}
	if letters == 0 || hex && digits > 0 && len(t) >= 8 || t[0] == '0' && len(t) > 1 && t[1] == 'x' {
		return nil
	}
	return t
}

// Features are the distinct features of text, sorted.
func Features(text string) []string {
	seen := map[string]bool{}
	visit(text, func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
		}
	})
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// Train builds a model from docs: the k features with the highest chi²
// (presence in the reports of one class against the rest, the best class)
// among those at least minDocs reports hold.
func Train(docs []Doc, k, minDocs int) *Model {
	classSet := map[string]bool{}
	for _, d := range docs {
		classSet[d.Cause] = true
	}
	m := &Model{K: k, MinDocs: minDocs}
	for c := range classSet {
		m.Classes = append(m.Classes, c)
	}
	sort.Strings(m.Classes)
	ci := map[string]int{}
	for i, c := range m.Classes {
		ci[c] = i
	}
	m.Docs = make([]int, len(m.Classes))
	counts := map[string][]int{}
	for _, d := range docs {
		c := ci[d.Cause]
		m.Docs[c]++
		for _, w := range Features(d.Text) {
			n := counts[w]
			if n == nil {
				n = make([]int, len(m.Classes))
				counts[w] = n
			}
			n[c]++
		}
	}
	type scoredWord struct {
		w     string
		score float64
	}
	var cand []scoredWord
	total := len(docs)
	for w, n := range counts {
		df := 0
		for _, x := range n {
			df += x
		}
		if df < minDocs {
			continue
		}
		best := 0.0
		for c := range m.Classes {
			if s := chi2(n[c], df-n[c], m.Docs[c]-n[c], total-df-(m.Docs[c]-n[c]), total); s > best {
				best = s
			}
		}
		cand = append(cand, scoredWord{w, best})
	}
	sort.Slice(cand, func(a, b int) bool {
		if cand[a].score != cand[b].score {
			return cand[a].score > cand[b].score
		}
		return cand[a].w < cand[b].w
	})
	if len(cand) > k {
		cand = cand[:k]
	}
	for _, s := range cand {
		m.Words = append(m.Words, s.w)
	}
	sort.Strings(m.Words)
	for _, w := range m.Words {
		m.Counts = append(m.Counts, counts[w])
	}
	m.prepare()
	return m
}

// chi2 of a 2×2 table: a reports of the class hold the word, b of the rest
// do; c of the class and d of the rest do not. Products of integers and one
// division: the same bits on every machine.
func chi2(a, b, c, d, n int) float64 {
	x := int64(a)*int64(d) - int64(b)*int64(c)
	den := int64(a+b) * int64(c+d) * int64(a+c) * int64(b+d)
	if den == 0 {
		return 0
	}
	return float64(n) * float64(x) * float64(x) / float64(den)
}

// prepare computes the weights: complement naive Bayes (Rennie et al.,
// 2003), each feature's weight for a class the negative log of its
// Laplace-smoothed probability in the reports of all the other classes,
// times complementScale, and no class prior. The plain multinomial model
// leaned to the causes with the most reports (a CPU-only build: on new
// reports it named it twice as often as it was right); the complement's
// estimates rest on the reports of every other class.
//
// Measured (issue 25), the plain model against this one:
//   - the words alone, each corpus batch judged by a model trained without
//     it (983 tuning reports of 54 batches): top-1 71.0 → 74.2 %, top-3
//     88.9 → 91.3 %;
//   - the whole doctor on reports it had not been tuned on: each batch's
//     tuning part judged by the doctor as committed before that batch came
//     (sessions 7 and 8, 398 reports): top-1 268 → 274, top-3 316 → 321;
//   - the tuned corpus: unchanged within a report or two.
func (m *Model) prepare() {
	m.index = make(map[string]int32, len(m.Words))
	for i, w := range m.Words {
		m.index[w] = int32(i)
	}
	nc := len(m.Classes)
	tot := make([]float64, nc)
	all := 0.0
	for _, n := range m.Counts {
		for c, x := range n {
			tot[c] += float64(x)
			all += float64(x)
		}
	}
	v := float64(len(m.Words))
	m.logp = make([][]float64, len(m.Words))
	for w, n := range m.Counts {
		m.logp[w] = make([]float64, nc)
		sum := 0.0
		for _, x := range n {
			sum += float64(x)
		}
		for c, x := range n {
			m.logp[w][c] = -complementScale * math.Log((sum-float64(x)+1)/(all-tot[c]+v))
		}
	}
	m.prior = make([]float64, nc)
}

// complementScale sharpens the complement model's posteriors: its sums are
// a few times flatter than the plain model's, for which the doctor's
// threshold and weights were chosen. Times 4 scored best of 1, 2 and 4 on
// the reports above (times 2: 272 of 398).
const complementScale = 4

// Prediction is what the words of a text point to.
type Prediction struct {
	Cause      string
	Confidence float64  // the posterior probability of Cause
	Features   int      // the model's features the text holds
	Words      []string // the features that weigh most for Cause, strongest first
}

// Posteriors is the posterior probability of every class (in the order
// of m.Classes) given the words of text, and how many of the model's
// features the text holds. Each feature counts once, however often the
// text holds it.
func (m *Model) Posteriors(text string) (post []float64, features int) {
	present, score := m.score(text)
	if len(score) == 0 {
		return nil, 0
	}
	best := 0
	for c := range score {
		if score[c] > score[best] {
			best = c
		}
	}
	sum := 0.0
	for c := range score {
		sum += math.Exp(score[c] - score[best])
	}
	post = make([]float64, len(score))
	for c := range score {
		post[c] = math.Exp(score[c]-score[best]) / sum
	}
	return post, len(present)
}

// score is the features of text the model knows and each class's log
// score.
func (m *Model) score(text string) ([]int32, []float64) {
	if len(m.Classes) == 0 {
		return nil, nil
	}
	seen := make([]bool, len(m.Words))
	var present []int32
	visit(text, func(b []byte) {
		if i, ok := m.index[string(b)]; ok && !seen[i] {
			seen[i] = true
			present = append(present, i)
		}
	})
	score := append([]float64(nil), m.prior...)
	for _, w := range present {
		for c := range score {
			score[c] += m.logp[w][c]
		}
	}
	return present, score
}

// Predict says which class the words of text point to. Each feature counts
// once, however often the text holds it.
func (m *Model) Predict(text string) Prediction {
	present, score := m.score(text)
	if len(score) == 0 {
		return Prediction{}
	}
	best := 0
	for c := range score {
		if score[c] > score[best] {
			best = c
		}
	}
	sum := 0.0
	for c := range score {
		sum += math.Exp(score[c] - score[best])
	}
	p := Prediction{Cause: m.Classes[best], Confidence: 1 / sum, Features: len(present)}
	// A word's weight for the class: how much likelier it is there than in
	// the other classes on average (log ratio).
	type ww struct {
		w int32
		x float64
	}
	var ws []ww
	nc := float64(len(m.Classes) - 1)
	for _, w := range present {
		other := 0.0
		for c := range m.Classes {
			if c != best {
				other += m.logp[w][c]
			}
		}
		if x := m.logp[w][best] - other/nc; x > 0 {
			ws = append(ws, ww{w, x})
		}
	}
	sort.Slice(ws, func(a, b int) bool {
		if ws[a].x != ws[b].x {
			return ws[a].x > ws[b].x
		}
		return ws[a].w < ws[b].w
	})
	for _, x := range ws[:min(len(ws), 6)] {
		p.Words = append(p.Words, m.Words[x.w])
	}
	return p
}

// Format writes the model as text: a header, then one line per feature,
// its counts per class, a tab, the feature.
func (m *Model) Format() []byte {
	var b bytes.Buffer
	b.WriteString("# gpuwizard word model: generated by `go run ./gpu/internal/wordmodel/gen` from gpu/testdata/corpus/tuning only; do not edit\n")
	fmt.Fprintf(&b, "k %d\nmin_docs %d\n", m.K, m.MinDocs)
	b.WriteString("classes " + strings.Join(m.Classes, " ") + "\n")
	b.WriteString("docs " + joinInts(m.Docs) + "\n")
	for i, w := range m.Words {
		b.WriteString(joinInts(m.Counts[i]) + "\t" + w + "\n")
	}
	return b.Bytes()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// Parse reads what Format wrote.
func Parse(data []byte) (*Model, error) {
	m := &Model{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	ints := func(s string) ([]int, error) {
		var out []int
		for _, f := range strings.Fields(s) {
			x, err := strconv.Atoi(f)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	for sc.Scan() {
		line++
		s := sc.Text()
		var err error
		switch {
		case strings.HasPrefix(s, "#") || s == "":
		case strings.HasPrefix(s, "k "):
			m.K, err = strconv.Atoi(s[2:])
		case strings.HasPrefix(s, "min_docs "):
			m.MinDocs, err = strconv.Atoi(s[9:])
		case strings.HasPrefix(s, "classes "):
			m.Classes = strings.Fields(s[8:])
		case strings.HasPrefix(s, "docs "):
			m.Docs, err = ints(s[5:])
		default:
			n, w, ok := strings.Cut(s, "\t")
			if !ok {
				return nil, fmt.Errorf("wordmodel: line %d: no tab", line)
			}
			var c []int
			if c, err = ints(n); err == nil && len(c) != len(m.Classes) {
				err = fmt.Errorf("%d counts for %d classes", len(c), len(m.Classes))
			}
			m.Words = append(m.Words, w)
			m.Counts = append(m.Counts, c)
		}
		if err != nil {
			return nil, fmt.Errorf("wordmodel: line %d: %w", line, err)
		}
	}
	if len(m.Docs) != len(m.Classes) || !slices.IsSorted(m.Words) {
		return nil, fmt.Errorf("wordmodel: bad header or unsorted features")
	}
	m.prepare()
	return m, nil
}

// The settings the doctor's model is generated with.
const (
	DefaultK       = 4000
	DefaultMinDocs = 3
)

// FromTuning trains the doctor's model on the tuning part of the corpus
// under dir, and on nothing else: the held-out part never reaches it.
func FromTuning(dir string) (*Model, error) {
	reports, err := corpus.Load(dir, "tuning")
	if err != nil {
		return nil, err
	}
	docs := make([]Doc, len(reports))
	for i, r := range reports {
		docs[i] = Doc{Cause: string(r.Cause), Text: r.Text}
	}
	return Train(docs, DefaultK, DefaultMinDocs), nil
}
