package watch

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gpuwizard/gpu"
)

// Thresholds of the judgement.
const (
	// StarvedUtilPct: a GPU busier than this on average is not starved.
	StarvedUtilPct = 10
	// saturatedMainPct: the main process alone keeps a core this busy
	// (Python's data loading in the main process, one thread under the GIL).
	saturatedMainPct = 90
	// saturatedWorkerPct: each DataLoader worker keeps a core this busy.
	saturatedWorkerPct = 85
	// saturatedShare: or the tree keeps this share of its usable cores busy
	// (its affinity, or its cgroup's CPU limit when lower).
	saturatedShare = 0.85
	// contendedPct: the main process or the workers wait this share of the
	// time for a CPU (other programs, or the cgroup limit, hold the cores).
	contendedPct = 25
	// idleCPUPct and idleUtilPct: below both, the process does nothing.
	idleCPUPct  = 5
	idleUtilPct = 5
	// launchGrace: a program that is no Python is given this long to start
	// one (a shell script, a launcher).
	launchGrace = 3 * time.Second
)

// verdictOf is the judge's answer.
type verdictOf struct {
	onGPU    bool
	state    State
	verdict  string
	findings []gpu.Finding
	unseen   []string
}

// finding is a watch finding with the short reason the verdict quotes.
type finding struct {
	gpu.Finding
	reason string
}

// judge decides where the tree runs and why: on a GPU NVML lists it on;
// on a GPU only its device files show (a container, WSL 2, MIG); or not
// on a GPU: setting up, idle, not a training, or on the CPU and why.
func judge(v *view) verdictOf {
	if len(v.listed) > 0 {
		return judgeOnGPU(v)
	}
	if u, ok := v.unseenUse(); ok {
		return judgeUnseen(v, u)
	}
	return judgeOffGPU(v)
}

// judgeOffGPU: no GPU context is seen. A cause that is sure at once (no
// GPU, a CPU-only build, CUDA_VISIBLE_DEVICES, the command line) is the
// verdict; otherwise a young process is setting up, a still one idle, a
// program with no framework not a training, and the rest has CUDA loaded
// and never used it.
func judgeOffGPU(v *view) verdictOf {
	permission := isPermission(v.id.mapsErr) && len(v.libs) == 0
	if !permission && !v.trainingLike() {
		return v.notTraining()
	}
	var fs []finding
	used := map[string]bool{} // doctor findings a watch finding stands for
	noGPU, noGPUFinding := v.noUsableGPU(used)
	if noGPU {
		fs = append(fs, noGPUFinding)
	}
	if permission {
		fs = append(fs, v.permissionFinding(noGPU))
	}
	if f, ok := v.cpuOnlyBuild(noGPU, used); ok {
		fs = append(fs, f)
	}
	if !noGPU {
		fs = append(fs, v.sureCauses(used)...)
	}
	if !hasSeverity(fs, gpu.SevError) && !permission {
		switch {
		case v.young():
			return v.settingUp()
		case v.idle():
			return v.idleOff()
		}
		if f, ok := v.cudaUnused(); ok {
			fs = append(fs, f)
		} else if f, ok := v.gpuwizardOnCPU(); ok {
			fs = append(fs, f)
		}
	}
	return v.cpuVerdict(fs, used, noGPU, permission)
}

// sureCauses are the reasons a process runs on the CPU that need no
// waiting: the doctor's errors about its interpreter, CUDA_VISIBLE_DEVICES
// (in its environment, or seen through CUDA opening no GPU), the command
// line, TensorFlow without its CUDA libraries.
func (v *view) sureCauses(used map[string]bool) []finding {
	var fs []finding
	// The doctor's errors about this interpreter explain why CUDA did not
	// start: a driver too old for the build, a GPU the build has no kernels
	// for, cuDNN.
	if v.libs.cudaLoaded() || v.libs.has(LibTensorFlow) {
		for _, d := range v.doctorFindings(used, gpu.SevError) {
			if d.Cause != gpu.CauseDeviceSelection && d.Cause != gpu.CauseCPUOnlyBuild {
				used[d.ID] = true
				fs = append(fs, finding{Finding: d, reason: lowerFirst(strings.TrimSuffix(d.Title, "."))})
			}
		}
	}
	for _, check := range []func() (finding, bool){v.visibleDevices, v.cudaSeesNoGPU, v.commandAsksCPU, func() (finding, bool) { return v.tfWithoutCUDA(used) }} {
		if f, ok := check(); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// cpuVerdict writes the verdict of a process on the CPU: its first error
// (or first finding), then the doctor's other errors and warnings.
func (v *view) cpuVerdict(fs []finding, used map[string]bool, noGPU, permission bool) verdictOf {
	out := verdictOf{state: StateCPU}
	for _, f := range fs {
		out.findings = append(out.findings, f.Finding)
	}
	// The doctor's other errors and warnings, unless a watch finding
	// stands for them (or, without a GPU, for the whole driver layer).
	for _, d := range v.doctorFindings(used, gpu.SevWarning) {
		if d.Cause == gpu.CauseDeviceSelection {
			continue // judged with the process's own environment above
		}
		if noGPU && (d.Cause == gpu.CauseDriverMissing || d.Cause == gpu.CauseWSLOrContainer || d.Cause == gpu.CauseOther) {
			continue
		}
		out.findings = append(out.findings, d)
	}
	if len(fs) == 0 {
		out.verdict = "Not on a GPU"
		return out
	}
	first := fs[0]
	for _, f := range fs {
		if f.Severity == gpu.SevError {
			first = f
			break
		}
	}
	if permission && first.ID == "watch_permission" {
		out.state = StatePermission
		out.verdict = first.reason
		return out
	}
	out.verdict = "On the CPU: " + first.reason
	return out
}

func hasSeverity(fs []finding, s gpu.Severity) bool {
	for _, f := range fs {
		if f.Severity == s {
			return true
		}
	}
	return false
}

// lowerFirst lowers a title's first letter unless the first word is a name
// (GPU, CUDA, NVIDIA, TensorFlow...).
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	r, n := utf8.DecodeRuneInString(word)
	if n == 0 || !unicode.IsUpper(r) {
		return s
	}
	rest := word[n:]
	for _, c := range rest {
		if unicode.IsUpper(c) || unicode.IsDigit(c) {
			return s // an acronym or a name with capitals inside
		}
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// trainingLike reports whether the tree trains or prepares to: a
// framework or CUDA library is loaded, or it is gpuwizard train.
func (v *view) trainingLike() bool {
	return v.libs.cudaLoaded() || len(v.frameworks) > 0 || gpuwizardTrain(v.idProc()) || v.isYOLO()
}

// young reports whether the process is still within its setup grace.
func (v *view) young() bool { return v.age < v.setupGrace }

// idle reports whether the tree used almost no CPU over the window (and
// its GPUs, when it is on them, did nothing either).
func (v *view) idle() bool {
	return v.cpuOK && v.readings >= 3 && v.cpuMean < idleCPUPct
}

// ageText is "started 12s ago".
func (v *view) ageText() string {
	if !v.ageKnown {
		return fmt.Sprintf("watched for %s", v.age.Round(time.Second))
	}
	return fmt.Sprintf("started %s ago", v.age.Round(time.Second))
}

// frameworkText names the loaded frameworks: "torch 2.5.1+cu124 (CUDA
// build)".
func (v *view) frameworkText() string {
	var parts []string
	for _, fw := range v.frameworks {
		s := fw.Name
		if fw.Version != "" {
			s += " " + fw.Version
		}
		parts = append(parts, s+" ("+buildWords(fw.Build)+")")
	}
	if len(parts) == 0 && v.libs.cudaLoaded() {
		return "CUDA libraries"
	}
	return strings.Join(parts, " and ")
}

// settingUp: a young process with a framework (or not yet one) and no GPU
// context: importing, building its dataset, downloading weights.
func (v *view) settingUp() verdictOf {
	what := "no deep-learning framework loaded yet"
	if fw := v.frameworkText(); fw != "" {
		what = fw + " loaded, no GPU context yet"
	}
	ev := []string{v.ageText() + fmt.Sprintf("; a process with no GPU context is judged once it is %s old", v.setupGrace.Round(time.Second))}
	ev = append(ev, v.cudaInitEvidence()...)
	ev = append(ev, v.nvmlNotListed()...)
	f := gpu.Finding{ID: "watch_setting_up", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    "Setting up: " + what,
		Evidence: ev,
		Fix: []gpu.Step{{Text: "Nothing to do yet: importing the framework, building the dataset or downloading weights takes a while. A training that puts its model on the GPU shows here within seconds of doing so."},
			{Text: "To wait for it in one go:", Command: fmt.Sprintf("gpuwizard watch --once --window 2m %d", v.pid)}}}
	return verdictOf{state: StateSettingUp, verdict: fmt.Sprintf("Setting up: %s (%s)", what, v.ageText()), findings: []gpu.Finding{f}}
}

// idleOff: a framework is loaded but the process does nothing and holds no
// GPU memory (a Jupyter kernel between cells, a paused script).
func (v *view) idleOff() verdictOf {
	what := v.frameworkText() + " loaded"
	ev := []string{fmt.Sprintf("cpu: %.1f %% of a core over the last %s", v.cpuMean, v.windowText())}
	ev = append(ev, v.cudaInitEvidence()...)
	ev = append(ev, v.nvmlNotListed()...)
	f := gpu.Finding{ID: "watch_idle", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    fmt.Sprintf("Idle: %s, but the process does nothing and holds no GPU memory", what),
		Evidence: ev,
		Fix:      []gpu.Step{{Text: "A Jupyter kernel between cells or a paused script: run the training (the next cell), then watch again; it is judged while it works."}}}
	return verdictOf{state: StateIdle, verdict: fmt.Sprintf("Idle: %s, but the process does nothing (CPU %.0f %%) and holds no GPU memory", what, v.cpuMean), findings: []gpu.Finding{f}}
}

// notTraining: no framework, no CUDA library, not a training command. A
// young process may still start one (a Python importing, a shell script).
func (v *view) notTraining() verdictOf {
	p := v.idProc()
	grace := launchGrace
	if pythonLike(p) || v.anyTrainer() {
		grace = v.setupGrace
	}
	if v.age < grace {
		return v.settingUp()
	}
	name := shortCommand(p.Cmdline, p.Comm)
	if len(name) > 60 {
		name = programName(p)
	}
	ev := []string{fmt.Sprintf("%s: no libtorch, TensorFlow, JAX or CUDA library", v.mapsName())}
	ev = append(ev, v.nvmlNotListed()...)
	ev = append(ev, v.ageText())
	f := gpu.Finding{ID: "watch_not_training", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    fmt.Sprintf("Not a training: %s has loaded no deep-learning framework or CUDA library", name),
		Evidence: ev,
		Fix:      []gpu.Step{{Text: "Watch the process that trains (the python, yolo or torchrun process; gpuwizard watch lists none? run `ps -ef | grep -i python`), or start it through watch: gpuwizard watch -- python train.py"}}}
	return verdictOf{state: StateNotTraining, verdict: fmt.Sprintf("Not a training: %s has loaded no deep-learning framework or CUDA library", name), findings: []gpu.Finding{f}}
}

// anyTrainer reports whether a process of the tree may train.
func (v *view) anyTrainer() bool {
	for _, m := range v.last.members {
		if trainerLike(m.proc) {
			return true
		}
	}
	return false
}

// mapsName is where the training process's libraries were read:
// "/proc/4242/maps", or "the DLLs of process 4242".
func (v *view) mapsName() string { return v.where(v.id.pid, "maps") }

// cudaInitEvidence says whether CUDA was initialised and which GPU device
// files the tree opened.
func (v *view) cudaInitEvidence() []string {
	var ev []string
	if l, ok := v.libs.first(LibCUDA); ok {
		ev = append(ev, "loaded: "+l.Path+": CUDA was initialised")
	} else if v.libs.cudaLoaded() {
		ev = append(ev, "the driver's CUDA library is not loaded: CUDA was not initialised yet")
	}
	for _, d := range v.dev.evidence() {
		ev = append(ev, "device: "+d)
	}
	return ev
}
