// Package paste reads a report pasted from another machine (the output of
// collect_env, nvidia-smi, nvidia-smi -q, nvcc, pip and conda lists,
// Ultralytics and TensorFlow logs, tracebacks, REPL sessions, dmesg, docker
// run lines, often several at once and mixed with prose) into the doctor's
// Facts: the same facts the live probe fills, so one judge decides both.
//
// Each line is cleaned (terminal escapes, CRLF, Markdown fences and quotes,
// shell and REPL prompts) and offered to a table of recognisers, one per
// report format (recognisers.go). A recogniser fills only facts it is sure
// of and records the line that proves them; what it is not sure of stays
// unknown. Error texts are found in the whole text by the signature
// catalogue.
package paste

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
)

// maxLine is how much of one line the line recognisers read.
const maxLine = 4096

// parser holds the state of one Parse call.
type parser struct {
	f        *gpu.Facts
	p        *gpu.PasteFacts
	env      *gpu.PythonEnv
	section  string   // the multi-line block being read: "ce_gpus", "ce_cudnn", "smiq_gpu", "smiq_fb", "smiq_mig"
	lastGPU  int      // index in f.NVML.GPUs of the GPU the last table row or -q section named, or -1
	queries  []string // the REPL expressions whose values the next lines hold, in order (prints in a row, then what they printed)
	oneLiner bool     // the queries are a python -c script's prints: a REPL query after it means its output was not pasted
	pipTorch bool     // pip listed torch
	heading  string   // an issue-template heading ("### TensorFlow version") whose value is on a later line
	csv      []string // the fields of nvidia-smi --query-gpu rows being read (query.go)
	low      string   // the line the recognisers read, lower-cased (not for offsets: non-ASCII may change length)
	formats  map[string]bool
}

// Parse reads a pasted report with the embedded signature catalogue. It
// never fails and never guesses.
func Parse(text string, now time.Time) *gpu.Facts {
	return ParseWith(catalog.Default(), text, now)
}

// ParseWith reads a pasted report, finding error texts with cat.
func ParseWith(cat *catalog.Catalog, text string, now time.Time) *gpu.Facts {
	f := &gpu.Facts{Schema: gpu.FactsSchema, CollectedAt: now.UTC(), Origin: "paste", Pythons: []gpu.PythonEnv{}}
	pp := &parser{f: f, p: &gpu.PasteFacts{Quotes: map[string][]string{}}, lastGPU: -1, formats: map[string]bool{}}
	pp.env = &gpu.PythonEnv{Interpreter: gpu.PasteInterpreter, Kind: "paste", FoundVia: []string{"pasted report"}}
	text = gpu.Sanitize(text)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	pp.p.Text = text
	lines := strings.Split(text, "\n")
	pp.p.Lines = len(lines)
	for _, raw := range lines {
		pp.line(raw)
	}
	// Error signatures are searched in the whole text: messages wrap.
	pp.p.Signatures = cat.Match(text)
	for _, lib := range gpu.ParseLdconfig(text) {
		lib.Origin = "report (ldconfig -p)"
		pp.library(lib)
		pp.formats["ldconfig"] = true
	}
	pp.finish()
	return f
}

var (
	promptRE = regexp.MustCompile(`^(?:\([^)]{1,60}\)\s*)?(?:\$ |# |>>> ?|\.\.\. |In \[\d+\]:\s*|Out\[\d+\]:\s*|PS [^>]{0,200}> ?|[A-Za-z]:\\[^>]{0,200}> ?|[\w.-]+@[\w.-]+:[^$#\n]{0,200}[$#] ?|!)`)
	quoteRE  = regexp.MustCompile(`^(?:>\s?)+`)
)

// clean removes what forums and terminals add around a line.
func clean(raw string) (string, bool) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, ">") {
		s = quoteRE.ReplaceAllString(s, "")
	}
	if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
		return "", false
	}
	if mayHavePrompt(s) {
		s = promptRE.ReplaceAllString(s, "")
	}
	return strings.TrimSpace(s), s != ""
}

// mayHavePrompt is a cheap test before the prompt regexp.
func mayHavePrompt(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '$', '#', '>', '.', '(', 'P', 'I', 'O', '!':
		return true
	}
	if len(s) > 2 && s[1] == ':' {
		return true
	}
	head := s[:min(len(s), 120)]
	return strings.Contains(head, "@") && strings.Contains(head, ":")
}

func (pp *parser) quote(kind, line string) {
	line = strings.TrimSpace(line)
	if len(line) > 240 {
		line = strings.ToValidUTF8(line[:240], "") + "…"
	}
	if slices.Contains(pp.p.Quotes[kind], line) {
		return
	}
	if len(pp.p.Quotes[kind]) < 6 {
		pp.p.Quotes[kind] = append(pp.p.Quotes[kind], line)
	}
}

func (pp *parser) prose(kind, value string) {
	if pp.p.Prose == nil {
		pp.p.Prose = map[string]string{}
	}
	if _, ok := pp.p.Prose[kind]; !ok {
		pp.p.Prose[kind] = value
	}
}

// setPackage records a package the report names. The same package with
// another version is another install (a second environment in the report):
// it is kept, marked shadowed, and the first one seen stays the one judged.
func (pp *parser) setPackage(name, version, note string) *gpu.Package {
	name = gpu.NormalizeName(name)
	for i := range pp.env.Packages {
		pk := &pp.env.Packages[i]
		if pk.Name != name {
			continue
		}
		same := version == "" || pk.Version == "" || pk.Version == version || sameBase(pk.Version, version)
		if !same {
			if pk.Shadowed {
				continue
			}
			for k := range pp.env.Packages {
				if o := &pp.env.Packages[k]; o.Name == name && o.Shadowed && o.Version == version {
					return o
				}
			}
			pp.env.Packages = append(pp.env.Packages, gpu.Package{Name: name, Version: version, Location: "the report (another install)", Shadowed: true})
			return &pp.env.Packages[len(pp.env.Packages)-1]
		}
		// A version with a build tag says more than one without.
		if gpu.LocalTag(version) != "" || pk.Version == "" {
			pk.Version = version
		}
		return pk
	}
	pp.env.Packages = append(pp.env.Packages, gpu.Package{Name: name, Version: version, Location: "the report", BuildNote: note})
	return &pp.env.Packages[len(pp.env.Packages)-1]
}

// sameBase: the versions without their build tags are equal ("1.0" and
// "1.0.0+cu100").
func sameBase(a, b string) bool {
	va, oka := gpu.ParseVersion(strings.SplitN(a, "+", 2)[0])
	vb, okb := gpu.ParseVersion(strings.SplitN(b, "+", 2)[0])
	return oka && okb && va.Compare(vb) == 0
}

// torch records a torch version with its build tag.
func (pp *parser) torch(version, line string) {
	pk := pp.setPackage("torch", version, "")
	tagBuild(pk, line)
	pp.quote("torch", line)
}

// tagBuild reads a wheel's build from its local version tag (+cpu,
// +cu121, +rocm6.1).
func tagBuild(pk *gpu.Package, line string) {
	tag := gpu.LocalTag(pk.Version)
	if strings.HasPrefix(tag, "cuda") {
		tag = "cu" + tag[len("cuda"):] // people write +cuda126 for +cu126
	}
	switch {
	case tag == "cpu":
		pk.CPUOnly, pk.CUDA = true, ""
		pk.BuildNote = `report: "` + trimQuote(line) + `"`
	case gpu.VariantCUDA(tag) != "":
		pk.CUDA, pk.CPUOnly = gpu.VariantCUDA(tag), false
		pk.BuildNote = `report: "` + trimQuote(line) + `"`
	case strings.HasPrefix(tag, "rocm"):
		pk.ROCm = strings.TrimPrefix(tag, "rocm")
	}
}

func trimQuote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 160 {
		return strings.ToValidUTF8(s[:160], "") + "…"
	}
	return s
}

// gpu records a GPU the report names, merging names that are the same
// card written differently (nvidia-smi cuts long names with "...").
func (pp *parser) gpu(name, cc, line string) *gpu.GPU {
	name = strings.TrimSpace(name)
	for i := range pp.f.NVML.GPUs {
		g := &pp.f.NVML.GPUs[i]
		if g.Name == name || strings.HasSuffix(name, g.Name) || strings.HasSuffix(g.Name, name) ||
			(strings.HasSuffix(g.Name, "...") && strings.HasPrefix(name, strings.TrimSuffix(g.Name, "..."))) {
			if len(name) > len(g.Name) && !strings.HasSuffix(name, "...") {
				g.Name = name
			}
			if g.CC == "" {
				g.CC = cc
			}
			pp.quote("gpu", line)
			return g
		}
	}
	pp.f.NVML.GPUs = append(pp.f.NVML.GPUs, gpu.GPU{Index: len(pp.f.NVML.GPUs), Name: name, CC: cc})
	pp.quote("gpu", line)
	return &pp.f.NVML.GPUs[len(pp.f.NVML.GPUs)-1]
}

// library records a CUDA library the report lists, once per file name.
func (pp *parser) library(l gpu.Library) {
	for _, o := range pp.f.CUDA.Libraries {
		if o.Soname == l.Soname && o.Path == l.Path {
			return
		}
	}
	pp.f.CUDA.Libraries = append(pp.f.CUDA.Libraries, l)
}

func (pp *parser) toolkit(version, line string) {
	for _, t := range pp.f.CUDA.Toolkits {
		if t.Version == version {
			return
		}
	}
	pp.f.CUDA.Toolkits = append(pp.f.CUDA.Toolkits, gpu.Toolkit{Path: "nvcc (report)", Version: version})
	pp.quote("toolkit", line)
}

func (pp *parser) line(raw string) {
	if len(raw) > maxLine {
		raw = raw[:maxLine] // line recognisers need no more; signatures see the whole text
	}
	// Prompts and paths say which system the report comes from, before
	// clean removes them.
	if strings.Contains(raw, ":\\") && windowsRE.MatchString(raw) {
		pp.f.Host.OS = "windows"
	}
	s, ok := clean(raw)
	if !ok {
		pp.section = ""
		return
	}
	if len(pp.queries) > 0 && !replQueryRE.MatchString(s) && pp.replAnswer(s) {
		return
	}
	if pp.heading != "" || strings.HasPrefix(s, "#") {
		if pp.templateHeading(s) {
			return
		}
	}
	if pp.section != "" && pp.inSection(s) {
		return
	}
	if pp.smiQuery(s) || pp.bareLine(s) {
		return
	}
	low := strings.ToLower(s)
	pp.low = low
	ascii := isASCII(low)
	for i := range recognisers {
		r := &recognisers[i]
		if r.hint != "" && !strings.Contains(low, r.hint) || r.anyOf != nil && !containsAnyOf(low, r.anyOf, ascii) {
			continue
		}
		m, ok := r.match(s, low)
		if !ok {
			continue
		}
		if r.format != "" {
			pp.formats[r.format] = true
		}
		r.apply(pp, m, s)
		if r.last {
			return
		}
	}
}

// match tries r on line s (low: s lower-cased): its submatches, and
// whether the line is r's.
func (r *recogniser) match(s, low string) ([]string, bool) {
	var m []string
	switch {
	case r.test != nil:
		return nil, r.test(s, low)
	case r.lower:
		m = submatchLower(r.re, s)
	default:
		m = r.re.FindStringSubmatch(s)
	}
	return m, m != nil
}

// smiQuery reads nvidia-smi --query-gpu output: the command, its header,
// its rows. It reports whether the line was a header or a row.
func (pp *parser) smiQuery(s string) bool {
	if pp.csv != nil {
		if pp.queryRow(s) {
			return true
		}
		pp.csv = nil
	}
	if strings.Contains(s, "--query-gpu") {
		pp.queryCommand(s)
		return false
	}
	return (strings.Contains(s, ",") || queryKeys[s]) && pp.queryHeader(s)
}

// bareLine reads a line that is only a value a command printed: torch's
// version, or the answers to the doctor's torch question.
func (pp *parser) bareLine(s string) bool {
	if len(s) > 400 || !(s[0] >= '0' && s[0] <= '9' || s[0] == '\'' || strings.Contains(s, "python")) {
		return false
	}
	return pp.bareTorch(s)
}

// finish turns what the lines said into facts the rules read.
func (pp *parser) finish() {
	f, p := pp.f, pp.p
	for i := range pp.env.Packages {
		pk := &pp.env.Packages[i]
		switch {
		case pk.Name != "torch":
		case pk.Version == "":
			// A torch seen only as "CUDA used to build PyTorch" has no version.
			pk.Version = "(version not shown)"
		case f.Host.OS == "windows" && pp.pipTorch && pk.CUDA == "" && !pk.CPUOnly && pk.ROCm == "" && gpu.LocalTag(pk.Version) == "":
			// On Windows, a torch from PyPI (pip lists it with no +cuXXX
			// tag) is CPU-only; conda's and prose versions say nothing.
			pk.CPUOnly = true
			pk.BuildNote = "report: torch " + pk.Version + " with no +cuXXX tag on Windows: PyPI's Windows wheels are CPU-only"
		}
	}
	pp.pluginBuilds()
	pp.valuesFromHits()
	pp.machineWords()
	// A GPU named only in prose stands for the machine's GPU when no tool
	// output names one.
	if name := p.Prose["gpu"]; name != "" && len(f.NVML.GPUs) == 0 {
		f.NVML.GPUs = append(f.NVML.GPUs, gpu.GPU{Index: 0, Name: name})
		pp.quote("gpu", name+" (named in the text)")
	}
	if len(pp.env.Packages) > 0 || pp.env.Version != "" {
		f.Pythons = append(f.Pythons, *pp.env)
	}
	if f.NVML.Status == "" && (f.NVML.DriverVersion != "" || f.NVML.CUDADriverVersion != "") && len(f.NVML.GPUs) > 0 {
		f.NVML.Status = gpu.NVMLOK
	}
	if f.NVML.GPUs == nil {
		f.NVML.GPUs = []gpu.GPU{}
	}
	if f.Host.OS == "" && (f.Host.Distro != "" || strings.Contains(strings.Join(p.Quotes["python"], " "), "/")) {
		f.Host.OS = "linux"
	}
	for k := range pp.formats {
		p.Formats = append(p.Formats, k)
	}
	sort.Strings(p.Formats)
	f.Paste = p
}

// valuesFromHits takes the values error texts carry (the driver's CUDA in
// "found version 10010", the GPU's sm_XX) as facts where no report format
// gave them.
func (pp *parser) valuesFromHits() {
	f := pp.f
	for _, h := range pp.p.Signatures {
		v := h.Values
		if n, err := strconv.Atoi(v["driver_cuda_int"]); err == nil && f.NVML.CUDADriverVersion == "" {
			f.NVML.CUDADriverVersion = gpu.CUDAFromInt(n)
		}
		if d := v["driver_cuda"]; d != "" && f.NVML.CUDADriverVersion == "" && validVersion(d) {
			f.NVML.CUDADriverVersion = gpu.MajorMinor(d)
		}
		if d := v["driver_version"]; d != "" && f.NVML.DriverVersion == "" && validVersion(d) {
			f.NVML.DriverVersion = d
		}
		if t := v["torch_version"]; t != "" && validVersion(strings.SplitN(t, "+", 2)[0]) {
			pp.torch(t, h.Line)
		}
		cc := v["cc"]
		if sm := v["sm"]; cc == "" && sm != "" {
			cc = gpu.ArchFromSM("sm_" + sm)
		}
		if name := strings.TrimSpace(v["gpu_name"]); name != "" {
			pp.gpu(name, cc, h.Line)
		} else if cc != "" && len(f.NVML.GPUs) == 1 && f.NVML.GPUs[0].CC == "" {
			f.NVML.GPUs[0].CC = cc
		}
	}
}

// pluginBuilds fills the builds that other packages decide: jaxlib's CUDA
// comes from a jax-cudaNN-plugin wheel; an untagged torch on Linux is
// PyPI's default CUDA build, whose CUDA the nvidia-* runtime wheel beside
// it tells.
func (pp *parser) pluginBuilds() {
	var jaxCUDA, runtimeCUDA string
	for _, pk := range pp.env.Packages {
		switch {
		case strings.HasPrefix(pk.Name, "jax-cuda") && (strings.HasSuffix(pk.Name, "-plugin") || strings.HasSuffix(pk.Name, "-pjrt")):
			jaxCUDA = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(pk.Name, "jax-cuda"), "-plugin"), "-pjrt")
		case pk.Name == "nvidia-cuda-runtime" || pk.Name == "nvidia-cuda-runtime-cu11" || pk.Name == "nvidia-cuda-runtime-cu12":
			if v, ok := gpu.ParseVersion(pk.Version); ok && runtimeCUDA == "" {
				runtimeCUDA = gpu.MajorMinor(v.String())
			}
		}
	}
	for i := range pp.env.Packages {
		pk := &pp.env.Packages[i]
		switch {
		case pk.Name == "jaxlib" && pk.CUDA == "" && !pk.CPUOnly && jaxCUDA != "":
			pk.CUDA, pk.BuildNote = jaxCUDA, "report: jax-cuda"+jaxCUDA+" plugin wheel"
		case pk.Name == "torch" && pk.CUDA == "" && !pk.CPUOnly && pk.ROCm == "" && gpu.LocalTag(pk.Version) == "" &&
			runtimeCUDA != "" && pp.f.Host.OS != "windows":
			pk.CUDA, pk.BuildNote = runtimeCUDA, "report: untagged torch with nvidia-cuda-runtime "+runtimeCUDA+" (PyPI's CUDA build)"
		}
	}
}

// containsAnyOf says whether s holds one of subs; on a line known to be
// ASCII (ascii) a needle in another script is not looked for.
func containsAnyOf(s string, subs []string, ascii bool) bool {
	for _, sub := range subs {
		if ascii && sub != "" && sub[0] >= utf8.RuneSelf {
			continue
		}
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// isASCII says whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// templateHeadingRE matches the headings of GitHub issue forms (TensorFlow's
// among them), whose answer follows on a later line:
//
//	### TensorFlow version
//
//	2.14.0
var (
	templateHeadingRE = regexp.MustCompile(`(?i)^#{2,4}\s*(tensorflow version|os platform and distribution|operating system)\s*\??\s*$`)
	templateTFRE      = regexp.MustCompile(`(?i)^(?:tf\s*|tensorflow\s*|v)?(\d+\.\d+(?:\.\d+)?)\b`)
)

// templateHeading reads an issue-form heading and the first line after it.
// It reports whether the line was consumed.
func (pp *parser) templateHeading(s string) bool {
	if m := templateHeadingRE.FindStringSubmatch(s); m != nil {
		pp.heading = strings.ToLower(m[1])
		return true
	}
	h := pp.heading
	if h == "" {
		return false
	}
	pp.heading = ""
	switch h {
	case "tensorflow version":
		if m := templateTFRE.FindStringSubmatch(s); m != nil {
			pp.setPackage("tensorflow", m[1], "")
			pp.quote("tensorflow", s)
		}
	default:
		if strings.Contains(strings.ToLower(s), "windows") {
			pp.f.Host.OS = "windows"
			pp.quote("os", s)
		}
	}
	return false
}

// submatchLower is re's first match in s lowered (ASCII letters only, so
// the offsets stay), its groups taken from s as written.
func submatchLower(re *regexp.Regexp, s string) []string {
	loc := re.FindStringSubmatchIndex(asciiLower(s))
	if loc == nil {
		return nil
	}
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}
