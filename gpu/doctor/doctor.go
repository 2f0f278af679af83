package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/gpu/compat"
	"strconv"
	"strings"
)

// scored is a finding with the weight of its evidence: Strong for what
// the machine's own facts prove, a signature's strength for an error text
// of a report.
type scored struct {
	gpu.Finding
	weight int
	// explains are the causes whose symptoms this finding produces: a
	// container without GPUs makes nvidia-smi fail as if no driver were
	// installed.
	explains []gpu.Cause
	// order places the differential's findings (1, 2, 3: most likely
	// first) among themselves; 0 for every other finding.
	order int
}

// judge holds one Diagnose call's state.
type judge struct {
	f        *gpu.Facts
	m        *compat.Matrix
	out      []scored
	advice   compat.WheelAdvice
	adviceOK bool // the advice was computed from known GPUs and driver
	visible  []gpu.GPU
	driverOK bool     // the driver answers (NVML works, or a report shows it does)
	rd       *reading // the report's text as the cues read it, once made
	hosted   int      // hostedElsewhere: 0 not yet known, 1 yes, -1 no
}

// add records a finding proven by facts.
func (j *judge) add(fd gpu.Finding) { j.addWeighted(fd, catalog.Strong) }

// addWeighted records a finding whose evidence has weight w.
func (j *judge) addWeighted(fd gpu.Finding, w int) {
	j.out = append(j.out, scored{Finding: fd, weight: w})
}

// addExplainingWeighted records a finding of weight w that explains the
// report's error texts of other causes.
func (j *judge) addExplainingWeighted(w int, fd gpu.Finding, explains ...gpu.Cause) {
	j.out = append(j.out, scored{Finding: fd, weight: w, explains: explains})
}

// addExplaining records a finding proven by facts that also explains the
// report's error texts of other causes.
func (j *judge) addExplaining(fd gpu.Finding, explains ...gpu.Cause) {
	j.out = append(j.out, scored{Finding: fd, weight: catalog.Strong, explains: explains})
}

// rule is one step of the judgement. Rules run in the order of the chain
// (platform and driver, containers, GPUs, frameworks and their builds,
// installs, the report's error texts, advice), each seeing what the
// earlier ones found.
type rule struct {
	name string
	run  func(*judge)
}

// rules is the judgement, in order. It is never modified.
var rules = []rule{
	{"platform", (*judge).rulePlatform},
	{"driver", (*judge).ruleDriver},
	{"wsl and containers", (*judge).ruleWSLAndContainers},
	{"device selection", withDriver((*judge).ruleDeviceSelection)},
	{"memory", withDriver((*judge).ruleMemory)},
	{"gpu state", withDriver((*judge).ruleGPUState)},
	{"end of support", (*judge).ruleEndOfSupport},
	{"frameworks", (*judge).ruleFrameworks},
	{"other frameworks", (*judge).ruleOtherFrameworks},
	{"installs", (*judge).ruleInstalls},
	{"toolkits", (*judge).ruleToolkits},
	{"windows", (*judge).ruleWindows},
	{"deep check", (*judge).ruleDeep},
	{"report", (*judge).judgePaste},
	{"advice", (*judge).ruleAdvice},
	{"gpus ok", (*judge).ruleGPUsOK},
	{"report lines", (*judge).quoteEvidence},
}

// withDriver runs a rule only when the driver answers.
func withDriver(r func(*judge)) func(*judge) {
	return func(j *judge) {
		if j.driverOK {
			r(j)
		}
	}
}

// Diagnose runs every rule over the facts and returns the findings, most
// important first, and the verdict. It never fails: unknown facts produce
// no finding or a finding that says what to run to know more.
func Diagnose(f *gpu.Facts, m *compat.Matrix) gpu.Report {
	f = fillFromNames(f, m)
	j := &judge{f: f, m: m}
	j.visible = j.visibleGPUs()
	j.computeAdvice()
	for _, r := range rules {
		r.run(j)
	}
	findings := j.sorted()
	r := gpu.Report{Findings: findings, Facts: f}
	r.Ready = j.ready(findings)
	r.Verdict = j.verdict(r.Ready, findings)
	return r
}

// ready: the driver answers, a GPU is visible, and nothing is wrong. A
// report is ready when it shows a working driver and GPU and no problem.
func (j *judge) ready(fs []gpu.Finding) bool {
	if hasSeverity(fs, gpu.SevError) {
		return false
	}
	if j.f.Origin == "paste" {
		pk, hasTorch := j.reportTorch()
		cudaBuild := hasTorch && !pk.CPUOnly && pk.CUDA != ""
		return (j.driverOK && len(j.visible) > 0 || cudaBuild) && !hasSeverity(fs, gpu.SevWarning) &&
			(j.f.Paste == nil || j.f.Paste.CUDAAvailable == nil || *j.f.Paste.CUDAAvailable)
	}
	return j.driverOK && len(j.visible) > 0
}

// fillFromNames gives GPUs whose compute capability is unknown (a pasted
// report, an NVML that does not say) the one their names imply, on a copy
// of the facts: every rule then reads g.CC.
func fillFromNames(f *gpu.Facts, m *compat.Matrix) *gpu.Facts {
	c := *f
	c.NVML.GPUs = append([]gpu.GPU(nil), f.NVML.GPUs...)
	for i := range c.NVML.GPUs {
		if c.NVML.GPUs[i].CC == "" {
			c.NVML.GPUs[i].CC = m.CCForName(c.NVML.GPUs[i].Name)
		}
	}
	return &c
}

func hasSeverity(fs []gpu.Finding, s gpu.Severity) bool {
	for _, f := range fs {
		if f.Severity == s {
			return true
		}
	}
	return false
}

func (j *judge) verdict(ready bool, fs []gpu.Finding) string {
	paste := j.f.Origin == "paste"
	if ready && paste {
		var parts []string
		if len(j.visible) > 0 && j.driverOK {
			g := j.visible[0]
			parts = append(parts, fmt.Sprintf("GPU %d (%s) answers through driver %s", g.Index, g.Name, OrUnknownDriver(j.driverVersion())))
		}
		if pk, ok := j.reportTorch(); ok && !pk.CPUOnly && pk.CUDA != "" {
			parts = append(parts, fmt.Sprintf("torch %s is a CUDA %s build", pk.Version, pk.CUDA))
		}
		return "Ready, as far as the report shows: " + joinWords(parts) + "; nothing in it is wrong."
	}
	if ready {
		g := j.visible[0]
		s := fmt.Sprintf("Ready: GPU training will use GPU %d (%s)", g.Index, g.Name)
		if env, pk, ok := j.primaryTorch(); ok && !pk.CPUOnly {
			s += fmt.Sprintf(" with torch %s in %s", pk.Version, env.Interpreter)
		}
		return s + "."
	}
	if len(fs) > 0 && (fs[0].Severity == gpu.SevError || paste && fs[0].Severity == gpu.SevWarning) {
		if paste {
			return "Diagnosis: " + fs[0].Title + "."
		}
		return "Not ready: " + fs[0].Title + "."
	}
	if paste {
		return "No problem found in the report; it may not show enough to decide."
	}
	if len(j.f.NVML.GPUs) == 0 && j.f.NVML.Status == "" {
		return "Not ready: the GPU could not be checked."
	}
	return "Not ready: no usable NVIDIA GPU."
}

// OrUnknownDriver is a driver version, or "(version not shown)".
func OrUnknownDriver(v string) string {
	if v == "" {
		return "(version not shown)"
	}
	return v
}

func (j *judge) windows() bool { return j.f.Host.OS == "windows" }

// driverCUDA is the newest CUDA the driver runs, from NVML or, failing that,
// from the driver version and the toolkit table.
func (j *judge) driverCUDA() string {
	if j.f.NVML.CUDADriverVersion != "" {
		return j.f.NVML.CUDADriverVersion
	}
	return j.cudaOfDriver(j.driverVersion())
}

// cudaOfDriver is the newest CUDA a driver of version dv runs, by the
// matrix ("" when dv is "").
func (j *judge) cudaOfDriver(dv string) string {
	if dv == "" {
		return ""
	}
	best := ""
	for _, t := range j.m.ToolkitDrivers {
		floor := t.DriverLinux
		if j.windows() && t.DriverWindows != "" {
			floor = t.DriverWindows
		}
		if gpu.VersionAtLeast(dv, floor) && (best == "" || gpu.VersionAtLeast(t.CUDA, best)) {
			best = t.CUDA
		}
	}
	return best
}

func (j *judge) driverVersion() string {
	if j.f.NVML.DriverVersion != "" {
		return j.f.NVML.DriverVersion
	}
	return j.f.Driver.ModuleVersion
}

// visibleGPUs applies CUDA_VISIBLE_DEVICES the way CUDA does: a list of
// indices or UUID prefixes, cut at the first entry that matches nothing.
func (j *judge) visibleGPUs() []gpu.GPU {
	all := j.f.NVML.GPUs
	ev, set := j.f.EnvVar("CUDA_VISIBLE_DEVICES")
	if !set {
		return all
	}
	var out []gpu.GPU
	for _, tok := range strings.Split(ev.Value, ",") {
		tok = strings.TrimSpace(tok)
		g, ok := matchGPU(all, tok)
		if !ok {
			break
		}
		out = append(out, g)
	}
	return out
}

func matchGPU(all []gpu.GPU, tok string) (gpu.GPU, bool) {
	if tok == "" {
		return gpu.GPU{}, false
	}
	if n, err := strconv.Atoi(tok); err == nil {
		for _, g := range all {
			if g.Index == n {
				return g, true
			}
		}
		return gpu.GPU{}, false
	}
	want := strings.TrimPrefix(strings.ToUpper(tok), "GPU-")
	for _, g := range all {
		have := strings.TrimPrefix(strings.ToUpper(g.UUID), "GPU-")
		if have != "" && strings.HasPrefix(have, want) {
			return g, true
		}
	}
	return gpu.GPU{}, false
}

func (j *judge) nvidiaPCI() []gpu.PCIDevice {
	var out []gpu.PCIDevice
	for _, d := range j.f.PCI {
		if d.IsGPU() {
			out = append(out, d)
		}
	}
	return out
}

func (j *judge) hasGPUHardware() bool {
	if j.f.Origin == "paste" {
		return true // a report about GPU training comes from a machine with a GPU, unless it shows otherwise
	}
	return len(j.nvidiaPCI()) > 0 || len(j.f.NVML.GPUs) > 0 || j.f.Host.WSL == 2 && j.f.Host.WSLLibCUDA
}

// primaryPython is the environment `python` (else `python3`) runs.
func (j *judge) primaryPython() (gpu.PythonEnv, bool) {
	for _, cmd := range []string{"python", "python3"} {
		for _, e := range j.f.Pythons {
			if gpu.Contains(e.Commands, cmd) {
				return e, true
			}
		}
	}
	return gpu.PythonEnv{}, false
}

func (j *judge) primaryTorch() (gpu.PythonEnv, gpu.Package, bool) {
	if e, ok := j.primaryPython(); ok {
		if pk, ok := e.Package("torch"); ok {
			return e, pk, true
		}
	}
	return gpu.PythonEnv{}, gpu.Package{}, false
}

// --- platform and driver layer -------------------------------------------

// --- GPUs ----------------------------------------------------------------
