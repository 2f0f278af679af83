package watch

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// Thresholds of the judgement.
const (
	// StarvedUtilPct: a GPU busier than this on average is not starved.
	StarvedUtilPct = 10
	// saturatedMainPct: the watched process alone keeps a core this busy
	// (Python's data loading in the main process, one thread under the GIL).
	saturatedMainPct = 90
	// saturatedShare: or the tree keeps this share of all its cores busy.
	saturatedShare = 0.85
)

// verdictOf is the judge's answer.
type verdictOf struct {
	onGPU    bool
	state    State
	verdict  string
	findings []gpu.Finding
}

// finding is a watch finding with the short reason the verdict quotes.
type finding struct {
	gpu.Finding
	reason string
}

// judge decides where the tree runs and why.
func judge(v *view) verdictOf {
	if len(v.listed) > 0 {
		return judgeOnGPU(v)
	}
	var fs []finding
	used := map[string]bool{} // doctor findings a watch finding stands for
	noGPU, noGPUFinding := v.noUsableGPU(used)
	if noGPU {
		fs = append(fs, noGPUFinding)
	}
	permission := isPermission(v.mapsErr) && len(v.libs) == 0
	if permission {
		fs = append(fs, v.permissionFinding(noGPU))
	}
	if f, ok := v.cpuOnlyBuild(noGPU, used); ok {
		fs = append(fs, f)
	}
	if !noGPU {
		// The doctor's errors about this interpreter explain why CUDA did
		// not start: a driver too old for the build, a GPU the build has
		// no kernels for, cuDNN.
		if v.libs.cudaLoaded() || v.libs.has(LibTensorFlow) {
			for _, d := range v.doctorFindings(used, gpu.SevError) {
				if d.Cause != gpu.CauseDeviceSelection && d.Cause != gpu.CauseCPUOnlyBuild {
					used[d.ID] = true
					fs = append(fs, finding{Finding: d, reason: lowerFirst(strings.TrimSuffix(d.Title, "."))})
				}
			}
		}
		if f, ok := v.visibleDevices(); ok {
			fs = append(fs, f)
		}
		if f, ok := v.commandAsksCPU(); ok {
			fs = append(fs, f)
		}
		if f, ok := v.tfWithoutCUDA(used); ok {
			fs = append(fs, f)
		}
		if f, ok := v.cudaUnused(); ok {
			fs = append(fs, f)
		}
	}
	if !permission && !v.libs.cudaLoaded() && len(v.frameworks) == 0 && !hasSeverity(fs, gpu.SevError) {
		fs = append(fs, v.noFramework())
	}
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

// judgeOnGPU: the tree is among a GPU's compute processes.
func judgeOnGPU(v *view) verdictOf {
	uses := v.gpuUses()
	var parts, ev []string
	busiest, measured := 0.0, false
	for _, u := range uses {
		s := fmt.Sprintf("GPU %d", u.Index)
		if u.Name != "" {
			s += " (" + u.Name + ")"
		}
		if u.UtilizationPct != nil {
			s += fmt.Sprintf(", %.0f %% busy", *u.UtilizationPct)
			busiest = max(busiest, *u.UtilizationPct)
			measured = true
		}
		s += fmt.Sprintf(", %d MiB", u.ProcessMiB)
		parts = append(parts, s)
		var pids []string
		for _, p := range u.PIDs {
			pids = append(pids, fmt.Sprintf("%d (%d MiB)", p, v.listed[u.Index][p]))
		}
		ev = append(ev, fmt.Sprintf("NVML: PID %s among the compute processes of GPU %d", strings.Join(pids, ", "), u.Index))
		if len(u.UtilHistory) > 0 {
			ev = append(ev, fmt.Sprintf("GPU %d utilisation over the last %s: %s %%", u.Index, v.windowText(), joinInts(u.UtilHistory)))
		}
		if u.MemoryTotalMiB > 0 {
			ev = append(ev, fmt.Sprintf("GPU %d memory: %d of %d MiB in use", u.Index, u.MemoryUsedMiB, u.MemoryTotalMiB))
		}
	}
	if l, ok := v.libs.first(LibTorchCUDA); ok {
		ev = append(ev, "loaded: "+l.Path)
	} else if l, ok := v.libs.first(LibCUDART); ok {
		ev = append(ev, "loaded: "+l.Path)
	}
	if isPermission(v.mapsErr) {
		ev = append(ev, fmt.Sprintf("/proc/%d/maps cannot be read (the process belongs to %s): the GPU side comes from NVML alone", v.pid, v.user))
	}
	out := verdictOf{onGPU: true, state: StateGPU}
	out.verdict = "On " + strings.Join(parts, "; ")
	ok := gpu.Finding{ID: "watch_on_gpu", Cause: gpu.CauseOther, Severity: gpu.SevOK, Title: "Runs on " + strings.Join(parts, "; "), Evidence: ev}
	if measured && busiest < StarvedUtilPct && v.saturated() && len(uses) > 0 && len(uses[0].UtilHistory) >= 2 {
		out.state = StateStarved
		u := uses[0]
		out.verdict = fmt.Sprintf("On GPU %d but starved: %.0f %% busy while the CPU is saturated (%s): data loading is the bottleneck", u.Index, busiest, v.cpuText())
		out.findings = append(out.findings, v.starvedFinding(u, busiest).Finding)
	}
	out.findings = append(out.findings, ok)
	return out
}

// saturated reports whether the tree keeps its CPU busy: the watched
// process a whole core (Python's data loading, one thread under the GIL),
// or the tree most of its cores.
func (v *view) saturated() bool {
	if !v.cpuOK {
		return false
	}
	return v.mainMean >= saturatedMainPct || v.cpuMean >= saturatedShare*float64(v.cores)*100
}

func (v *view) cpuText() string {
	return fmt.Sprintf("%.0f %% of %s, %.0f %% in the main process", v.cpuMean, plural.Count(v.cores, "core"), v.mainMean)
}

func (v *view) windowText() string {
	d := v.window
	if v.elapsed > 0 && v.elapsed < d {
		d = v.elapsed
	}
	return d.Round(time.Second).String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

func (v *view) isYOLO() bool {
	for i, a := range v.first.Cmdline {
		if i > 1 {
			break
		}
		if b := baseName(a); b == "yolo" || b == "ultralytics" {
			return true
		}
	}
	return v.first.Comm == "yolo"
}

func (v *view) starvedFinding(u GPUUse, util float64) finding {
	workers := min(max(v.cores-1, 2), 8)
	var fix []gpu.Step
	_, tf := v.framework("tensorflow")
	switch {
	case v.isYOLO():
		fix = append(fix, gpu.Step{Text: "Give the loader more workers and cache the decoded images in memory (or on disk: cache=disk):",
			Command: fmt.Sprintf("yolo train ... workers=%d cache=ram", workers)})
	case tf:
		fix = append(fix, gpu.Step{Text: "Decode and augment in parallel and prefetch the next batches while the GPU works:",
			Command: "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).batch(bs).prefetch(tf.data.AUTOTUNE)"})
	default:
		fix = append(fix, gpu.Step{Text: "Load batches in worker processes, into pinned memory, and keep the workers between epochs:",
			Command: fmt.Sprintf("DataLoader(dataset, batch_size=bs, num_workers=%d, pin_memory=True, persistent_workers=True)", workers)},
			gpu.Step{Text: "Then copy each batch without waiting:", Command: "x = x.to(device, non_blocking=True)"})
	}
	fix = append(fix,
		gpu.Step{Text: "Raise the batch size while GPU memory allows: fewer, larger steps keep the GPU busy longer."},
		gpu.Step{Text: "Decode, resize and normalise images once before training instead of in every epoch (or use smaller images on disk)."})
	ev := []string{
		fmt.Sprintf("GPU %d utilisation over the last %s: %s %% (mean %.0f %%)", u.Index, v.windowText(), joinInts(u.UtilHistory), util),
		"CPU: " + v.cpuText(),
	}
	return finding{Finding: gpu.Finding{ID: "watch_gpu_starved", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
		Title:    fmt.Sprintf("GPU %d is starved: %.0f %% busy while the CPU is saturated, so data loading is the bottleneck", u.Index, util),
		Evidence: ev, Fix: fix}, reason: "the GPU waits for data"}
}

// doctorFindings are the doctor's findings of at least severity sev that
// no watch finding stands for yet.
func (v *view) doctorFindings(used map[string]bool, sev gpu.Severity) []gpu.Finding {
	if v.diag == nil {
		return nil
	}
	var out []gpu.Finding
	for _, f := range v.diag.Findings {
		if used[f.ID] || f.Severity.Rank() > sev.Rank() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// noUsableGPU: NVML answers with no GPU, or does not answer. The reason is
// "no NVIDIA GPU on this machine" when PCI shows none, otherwise the
// doctor's first finding about the driver.
func (v *view) noUsableGPU(used map[string]bool) (bool, finding) {
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		return false, finding{}
	}
	nvEv := "NVML: " + v.nvml
	if v.nvmlErr != "" {
		nvEv = "NVML: " + v.nvmlErr
	}
	if v.nvml == gpu.NVMLOK {
		nvEv = "NVML: the driver answers but lists no GPU"
	}
	ev := []string{nvEv}
	ev = append(ev, v.loadedEvidence()...)
	if v.pciNone() {
		ev = append([]string{"no PCI display device with vendor 0x10de in /sys/bus/pci/devices"}, ev...)
		fix := []gpu.Step{
			{Text: "Training can only run on the CPU here; it works, slowly. For GPU training use a machine or cloud instance with an NVIDIA GPU."}}
		if v.facts != nil && v.facts.Host.Container != "" {
			ev = append(ev, "inside a "+v.facts.Host.Container+" container")
			fix = append(fix, gpu.Step{Text: "If the host does have an NVIDIA GPU, start this container with it (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."})
		}
		return true, finding{Finding: gpu.Finding{ID: "watch_no_gpu", Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title: "Runs on the CPU: there is no NVIDIA GPU on this machine", Evidence: ev, Fix: fix},
			reason: "no NVIDIA GPU on this machine"}
	}
	// The doctor's own finding about the driver layer.
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Severity != gpu.SevError {
				continue
			}
			switch d.Cause {
			case gpu.CauseDriverMissing, gpu.CauseWSLOrContainer, gpu.CauseOther:
				used[d.ID] = true
				reason := "no usable GPU: " + lowerFirst(strings.TrimSuffix(d.Title, "."))
				return true, finding{Finding: gpu.Finding{ID: "watch_no_usable_gpu", Cause: d.Cause, Severity: gpu.SevError,
					Title:    "Runs on the CPU: " + d.Title,
					Evidence: append(append(ev, d.Evidence...), "gpuwizard doctor: "+d.ID),
					Fix:      d.Fix}, reason: reason}
			}
		}
	}
	return true, finding{Finding: gpu.Finding{ID: "watch_no_usable_gpu", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
		Title: "Runs on the CPU: no GPU answers through NVML", Evidence: ev,
		Fix: []gpu.Step{{Text: "See what the doctor finds:", Command: "gpuwizard doctor"}}},
		reason: "no usable GPU (NVML: " + v.nvml + ")"}
}

// pciNone: the machine's PCI bus was read and holds no NVIDIA GPU (and it
// is not WSL, whose GPU is not on a PCI bus Linux sees).
func (v *view) pciNone() bool {
	f := v.facts
	if f == nil || f.Host.WSL > 0 {
		return false
	}
	if st, ok := f.Source("pci"); !ok || !st.OK {
		return false
	}
	for _, d := range f.PCI {
		if d.IsGPU() {
			return false
		}
	}
	return true
}

// loadedEvidence names the frameworks' libraries the process has loaded.
func (v *view) loadedEvidence() []string {
	var ev []string
	for _, fw := range v.frameworks {
		s := fmt.Sprintf("loaded: %s (%s", fw.Evidence, fw.Name)
		if fw.Version != "" {
			s += " " + fw.Version
		}
		s += ", " + buildWords(fw.Build) + ")"
		ev = append(ev, s)
	}
	return ev
}

func buildWords(b string) string {
	switch b {
	case "cpu":
		return "CPU-only build"
	case "cuda":
		return "CUDA build"
	case "rocm":
		return "ROCm build"
	}
	return "build unknown"
}

func (v *view) permissionFinding(noGPU bool) finding {
	cmd := fmt.Sprintf("gpuwizard watch %d", v.pid)
	ev := []string{fmt.Sprintf("/proc/%d/maps: permission denied (the process belongs to %s)", v.pid, v.user)}
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		ev = append(ev, fmt.Sprintf("NVML lists PID %d (and its children) on no GPU (it sees %s)", v.pid, plural.Count(len(v.last.devs), "GPU")))
	}
	if c := strings.Join(v.first.Cmdline, " "); c != "" {
		ev = append(ev, "cmdline: "+gpu.Sanitize(c))
	}
	sev, reason := gpu.SevError, fmt.Sprintf("Cannot tell where process %d runs: it belongs to %s, and its libraries and environment cannot be read (permission denied)", v.pid, v.user)
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		reason += "; NVML does not list it on any GPU"
	}
	if noGPU {
		sev = gpu.SevInfo // the machine has no GPU: it runs on the CPU whatever it loaded
	}
	return finding{Finding: gpu.Finding{ID: "watch_permission", Cause: gpu.CauseOther, Severity: sev,
		Title:    fmt.Sprintf("Process %d belongs to %s: its libraries and environment cannot be read (permission denied)", v.pid, v.user),
		Evidence: ev,
		Fix: []gpu.Step{{Text: "Watch it as its user:", Command: fmt.Sprintf("sudo -u %s %s", gpu.ShellQuote(v.user), cmd)},
			{Text: "Or as root:", Command: "sudo " + cmd}}}, reason: reason}
}

// cpuOnlyBuild: the framework loaded is built without CUDA.
func (v *view) cpuOnlyBuild(noGPU bool, used map[string]bool) (finding, bool) {
	var fw Framework
	found := false
	for _, f := range v.frameworks {
		if f.Build == "cpu" || f.Build == "rocm" {
			fw, found = f, true
			break
		}
	}
	if !found {
		return finding{}, false
	}
	name := fw.Name
	if fw.Version != "" {
		name += " " + fw.Version
	}
	ev := []string{"loaded: " + fw.Evidence}
	switch fw.Name {
	case "torch":
		if fw.Build == "rocm" {
			ev = append(ev, "libtorch_hip.so: a ROCm build, for AMD GPUs")
		} else {
			ev = append(ev, "no libtorch_cuda.so in /proc/"+strconv.Itoa(v.pid)+"/maps: torch has no CUDA part")
		}
	case "jax":
		ev = append(ev, "no JAX CUDA plugin loaded")
	}
	if v.interp != nil {
		for _, pk := range v.interp.Packages {
			if pk.Name == fw.Name && pk.BuildNote != "" && (fw.Location == "" || pk.Location == fw.Location) {
				ev = append(ev, fmt.Sprintf("%s: %s (%s)", v.interp.Interpreter, pk.BuildNote, pk.Location))
				break
			}
		}
	}
	what := "a CPU-only build"
	if fw.Build == "rocm" {
		what = "a ROCm (AMD) build"
	}
	f := gpu.Finding{ID: "watch_cpu_only_build", Cause: gpu.CauseCPUOnlyBuild, Severity: gpu.SevError, Evidence: ev}
	if noGPU {
		f.Severity = gpu.SevInfo
		f.Title = fmt.Sprintf("%s, %s, is loaded (right for this machine, which has no usable GPU)", name, what)
		return finding{Finding: f, reason: fmt.Sprintf("%s of %s is loaded", what, name)}, true
	}
	f.Title = fmt.Sprintf("%s, %s, is loaded: it can never use the GPU", name, what)
	// The doctor's wheel advice for this interpreter is the fix.
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Cause == gpu.CauseCPUOnlyBuild && !used[d.ID] && len(d.Fix) > 0 {
				used[d.ID] = true
				f.Fix = d.Fix
				break
			}
		}
	}
	if len(f.Fix) == 0 {
		f.Fix = v.genericBuildFix(fw)
	}
	return finding{Finding: f, reason: fmt.Sprintf("%s of %s is loaded", what, name)}, true
}

func (v *view) python() string {
	if v.interp != nil {
		return gpu.ShellQuote(v.interp.Interpreter)
	}
	return "python"
}

func (v *view) genericBuildFix(fw Framework) []gpu.Step {
	py := v.python()
	switch fw.Name {
	case "tensorflow":
		return []gpu.Step{{Text: "Install TensorFlow with its CUDA libraries (Linux and WSL 2):", Command: py + ` -m pip install "tensorflow[and-cuda]"`}}
	case "jax":
		return []gpu.Step{{Text: "Install JAX with its CUDA plugin:", Command: py + ` -m pip install -U "jax[cuda12]"`}}
	}
	return []gpu.Step{{Text: "Install a CUDA build of torch into this interpreter (see gpuwizard doctor for the newest wheel this driver runs):",
		Command: py + " -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126"}}
}

// visibleDevices: CUDA_VISIBLE_DEVICES in the process's environment hides
// every GPU NVML sees (CUDA stops at the first entry it cannot match).
func (v *view) visibleDevices() (finding, bool) {
	val, set := v.environ["CUDA_VISIBLE_DEVICES"]
	if !set {
		return finding{}, false
	}
	for _, tok := range strings.Split(val, ",") {
		tok = strings.TrimSpace(tok)
		if matchDevice(v.last.devs, tok) {
			return finding{}, false // the first entry names a GPU
		}
		break
	}
	shown := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", val)
	why := "it is set but empty"
	switch {
	case strings.TrimSpace(val) == "-1":
		why = "-1 hides every GPU (Ultralytics sets it for device=cpu)"
	case strings.TrimSpace(val) != "":
		why = fmt.Sprintf("%q matches no GPU (NVML sees %s)", strings.Split(val, ",")[0], plural.Count(len(v.last.devs), "GPU"))
	}
	cmd := strings.Join(quoteAll(v.first.Cmdline), " ")
	if cmd == "" {
		cmd = "python train.py"
	}
	return finding{Finding: gpu.Finding{ID: "watch_visible_devices_hide_gpus", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
		Title:    "CUDA_VISIBLE_DEVICES in the process's environment hides every GPU: " + why,
		Evidence: []string{fmt.Sprintf("/proc/%d/environ: %s", v.pid, shown), fmt.Sprintf("NVML sees %s; CUDA in this process sees none", plural.Count(len(v.last.devs), "GPU"))},
		Fix: []gpu.Step{{Text: "Start it without the variable:", Command: "env -u CUDA_VISIBLE_DEVICES " + cmd},
			{Text: "Or name the GPU to use:", Command: "CUDA_VISIBLE_DEVICES=0 " + cmd},
			{Text: "Look for where it is set: ~/.bashrc, the IDE's run configuration, a launcher script, or os.environ in the code."}}},
		reason: fmt.Sprintf("%s hides every GPU", shown)}, true
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = gpu.ShellQuote(gpu.Sanitize(a))
	}
	return out
}

// matchDevice reports whether a CUDA_VISIBLE_DEVICES entry names a GPU:
// an index, or a (prefix of a) GPU or MIG UUID.
func matchDevice(devs []device, tok string) bool {
	if tok == "" {
		return false
	}
	if n, err := strconv.Atoi(tok); err == nil {
		for _, d := range devs {
			if d.Index == n {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(tok, "MIG-") {
		return len(devs) > 0
	}
	want := strings.TrimPrefix(strings.ToUpper(tok), "GPU-")
	for _, d := range devs {
		have := strings.TrimPrefix(strings.ToUpper(d.UUID), "GPU-")
		if have != "" && strings.HasPrefix(have, want) {
			return true
		}
	}
	return false
}

// commandAsksCPU: the command line chooses the CPU (Ultralytics'
// device=cpu, a script's --device cpu).
func (v *view) commandAsksCPU() (finding, bool) {
	args := v.first.Cmdline
	fixed := append([]string(nil), args...)
	arg := ""
	for i, a := range args {
		low := strings.ToLower(strings.Trim(a, `"'`))
		switch {
		case low == "device=cpu" || low == "device='cpu'":
			arg, fixed[i] = a, "device=0"
		case low == "--device=cpu":
			arg, fixed[i] = a, "--device=cuda"
		case low == "--device" && i+1 < len(args) && strings.ToLower(args[i+1]) == "cpu":
			arg, fixed[i+1] = a+" "+args[i+1], "cuda"
		}
		if arg != "" {
			break
		}
	}
	if arg == "" {
		return finding{}, false
	}
	return finding{Finding: gpu.Finding{ID: "watch_command_asks_cpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
		Title:    fmt.Sprintf("The command line asks for the CPU (%s)", gpu.Sanitize(arg)),
		Evidence: []string{fmt.Sprintf("/proc/%d/cmdline: %s", v.pid, gpu.Sanitize(strings.Join(args, " ")))},
		Fix:      []gpu.Step{{Text: "Ask for the GPU instead:", Command: strings.Join(quoteAll(fixed), " ")}}},
		reason: fmt.Sprintf("the command line asks for it (%s)", gpu.Sanitize(arg))}, true
}

// tfName is "TensorFlow 2.15.0", or "TensorFlow" when the version is unknown.
func tfName(fw Framework) string {
	if fw.Version == "" {
		return "TensorFlow"
	}
	return "TensorFlow " + fw.Version
}

// tfWithoutCUDA: a CUDA build of TensorFlow runs without any of its CUDA
// libraries loaded: it found none and fell back to the CPU.
func (v *view) tfWithoutCUDA(used map[string]bool) (finding, bool) {
	fw, ok := v.framework("tensorflow")
	if !ok || (fw.Build != "cuda" && fw.Build != "unknown") || v.libs.has(LibCUDART) || v.libs.has(LibCuBLAS) || v.libs.has(LibCuDNN) {
		return finding{}, false
	}
	ev := []string{"loaded: " + fw.Evidence}
	if fw.Build == "cuda" {
		ev = append(ev, fmt.Sprintf("TensorFlow %s is built for CUDA %s", fw.Version, gpu.OrUnknown(fw.CUDA)))
	} else {
		ev = append(ev, "its build is unknown (the interpreter's package files were not found): a CPU-only build, or one that could not load its CUDA libraries")
	}
	ev = append(ev, fmt.Sprintf("no libcudart, libcublas or libcudnn in /proc/%d/maps", v.pid))
	if ld, ok := v.environ["LD_LIBRARY_PATH"]; ok {
		ev = append(ev, "LD_LIBRARY_PATH="+ld)
	} else if v.environ != nil {
		ev = append(ev, "LD_LIBRARY_PATH is not set")
	}
	f := gpu.Finding{ID: "watch_tf_without_cuda_libs", Cause: gpu.CauseTFGPULibs, Severity: gpu.SevError,
		Title:    tfName(fw) + " is loaded but none of its CUDA libraries are: it found no GPU and runs on the CPU",
		Evidence: ev}
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Cause == gpu.CauseTFGPULibs && !used[d.ID] {
				used[d.ID] = true
				f.Evidence = append(f.Evidence, d.Evidence...)
				f.Fix = d.Fix
				break
			}
		}
	}
	if len(f.Fix) == 0 {
		f.Fix = v.genericBuildFix(fw)
	}
	f.Fix = append(f.Fix, gpu.Step{Text: "See what TensorFlow finds, and the libraries it could not load:",
		Command: v.python() + ` -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"`})
	return finding{Finding: f, reason: "TensorFlow could not load its CUDA libraries"}, true
}

// cudaUnused: CUDA libraries are loaded but NVML lists no process of the
// tree: no GPU context holds memory, so the code never put its model or
// tensors on the GPU.
func (v *view) cudaUnused() (finding, bool) {
	if !v.libs.cudaLoaded() {
		return finding{}, false
	}
	var ev []string
	for _, k := range []string{LibTorchCUDA, LibCUDART, LibCuDNN, LibCuBLAS, LibJAXCUDA, LibORTCUDA} {
		if l, ok := v.libs.first(k); ok {
			ev = append(ev, "loaded: "+l.Path)
		}
	}
	if l, ok := v.libs.first(LibCUDA); ok {
		ev = append(ev, "loaded: "+l.Path+": CUDA was initialised (torch.cuda.is_available() or similar ran), yet no GPU memory was taken")
	} else {
		ev = append(ev, "libcuda.so.1 is not loaded: CUDA was never initialised in this process, nothing asked for the GPU")
	}
	notListed := v.nvmlNotListed()
	ev = append(ev, notListed...)
	sev := gpu.SevError
	if v.facts != nil && v.facts.Host.Container != "" && v.foreignPIDs() {
		sev = gpu.SevWarning
		ev = append(ev, "inside a container: NVML lists processes by the host's PIDs, which this PID namespace does not show; one of them may be this process")
	}
	ev = append(ev, fmt.Sprintf("running for %s", v.elapsed.Round(time.Second)))
	py := v.python()
	_, torch := v.framework("torch")
	if fw, tf := v.framework("tensorflow"); tf && !torch {
		// TensorFlow puts its work on every GPU it can open by itself: with
		// no context it opened none.
		return finding{Finding: gpu.Finding{ID: "watch_tf_no_gpu_device", Cause: gpu.CauseTFGPULibs, Severity: sev,
			Title:    tfName(fw) + " loaded CUDA libraries but opened no GPU (no GPU context or memory): it runs on the CPU",
			Evidence: ev,
			Fix: []gpu.Step{{Text: "See the GPUs TensorFlow finds; its log says which library it could not load (\"Cannot dlopen some GPU libraries\"):",
				Command: py + ` -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"`},
				{Text: "Check the whole chain for this interpreter:", Command: "gpuwizard doctor"}}},
			reason: "TensorFlow opened no GPU"}, true
	}
	fix := []gpu.Step{}
	if v.isYOLO() {
		fix = append(fix, gpu.Step{Text: "Ask Ultralytics for the GPU:", Command: "yolo train ... device=0"})
	} else if _, tf := v.framework("tensorflow"); !tf {
		fix = append(fix,
			gpu.Step{Text: "Move the model and every batch to the GPU:", Command: `device = torch.device("cuda"); model.to(device); x, y = x.to(device), y.to(device)`},
			gpu.Step{Text: "Check what torch sees from this interpreter:", Command: py + ` -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"`})
	}
	fix = append(fix, gpu.Step{Text: "A program that picks its device at start (device = 'cuda' if torch.cuda.is_available() else 'cpu') falls back silently: print the device it chose."})
	return finding{Finding: gpu.Finding{ID: "watch_cuda_unused", Cause: gpu.CauseDeviceMismatchInCode, Severity: sev,
		Title:    "CUDA libraries are loaded but the process has no GPU context and no GPU memory: the code never moved its model to the GPU",
		Evidence: ev, Fix: fix},
		reason: "CUDA libraries are loaded but no GPU context or memory exists: the model was never moved to the GPU"}, true
}

// nvmlNotListed says on which GPUs NVML does not list the tree.
func (v *view) nvmlNotListed() []string {
	var ev []string
	for _, d := range v.last.devs {
		if !d.ProcsOK {
			ev = append(ev, fmt.Sprintf("NVML: %s does not list its compute processes", d.label()))
			continue
		}
		who := fmt.Sprintf("PID %d is", v.pid)
		if n := len(v.last.members) - 1; n > 0 {
			who = fmt.Sprintf("PID %d and its %s are", v.pid, plural.Count(n, "child process"))
		}
		ev = append(ev, fmt.Sprintf("NVML: %s not among the %s of %s", who, plural.Count(len(d.Procs), "compute process"), d.label()))
	}
	return ev
}

// foreignPIDs: NVML lists compute processes that /proc does not show
// (the host's PIDs, seen from a container).
func (v *view) foreignPIDs() bool { return v.foreign }

func (v *view) noFramework() finding {
	what := "no deep-learning framework and no CUDA library is loaded"
	if v.elapsed < 10*time.Second {
		what += " (yet: importing one takes seconds)"
	}
	ev := []string{fmt.Sprintf("/proc/%d/maps: no libtorch, TensorFlow, JAX or CUDA library", v.pid)}
	ev = append(ev, v.nvmlNotListed()...)
	return finding{Finding: gpu.Finding{ID: "watch_no_framework", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
		Title: "Not on a GPU: " + what, Evidence: ev,
		Fix: []gpu.Step{{Text: "Watch the process that trains (the python or yolo process, not a shell that started it), or wait until it has imported its framework."}}},
		reason: what}
}

// evidence is the flat list of what the verdict rests on.
func (v *view) evidence() []string {
	var ev []string
	p := fmt.Sprintf("process: PID %d, %s", v.pid, gpu.Sanitize(strings.Join(v.first.Cmdline, " ")))
	var extra []string
	if v.exe != "" {
		extra = append(extra, "exe "+v.exe)
	} else if isPermission(v.exeErr) {
		extra = append(extra, "exe: permission denied")
	}
	if v.cwd != "" {
		extra = append(extra, "cwd "+v.cwd)
	}
	extra = append(extra, "user "+v.user)
	ev = append(ev, p+" ("+strings.Join(extra, ", ")+")")
	if kids := v.childrenText(); kids != "" {
		ev = append(ev, "children: "+kids)
	}
	if v.cpuOK {
		ev = append(ev, fmt.Sprintf("cpu: %.0f %% over the last %s (100 %% is one core; %s), %.0f %% in the main process, %s", v.cpuMean, v.windowText(), plural.Count(v.cores, "core"), v.mainMean, plural.Count(v.threads(), "thread")))
	} else {
		ev = append(ev, fmt.Sprintf("cpu: not measured yet (one reading), %s", plural.Count(v.threads(), "thread")))
	}
	switch {
	case v.nvml != gpu.NVMLOK:
		s := "nvml: " + v.nvml
		if v.nvmlErr != "" {
			s += " (" + v.nvmlErr + ")"
		}
		ev = append(ev, s)
	case len(v.last.devs) == 0:
		ev = append(ev, "nvml: no GPU")
	default:
		for _, d := range v.last.devs {
			s := fmt.Sprintf("nvml: %s", d.label())
			if st := v.util(d.Index); st.n > 0 {
				s += fmt.Sprintf(", %.0f %% busy (%s)", st.mean, joinInts(st.hist))
			}
			if d.MemTotalMiB > 0 {
				s += fmt.Sprintf(", %d/%d MiB used", d.MemUsedMiB, d.MemTotalMiB)
			}
			if d.ProcsOK {
				var mine uint64
				for _, mib := range v.listed[d.Index] {
					mine += mib
				}
				if pids, ok := v.listed[d.Index]; ok {
					s += fmt.Sprintf(", this process tree: %d MiB in %s", mine, plural.Count(len(pids), "process"))
				} else {
					s += fmt.Sprintf(", %s, none of this tree", plural.Count(len(d.Procs), "compute process"))
				}
			}
			ev = append(ev, s)
		}
	}
	if isPermission(v.mapsErr) && len(v.libs) == 0 {
		ev = append(ev, fmt.Sprintf("libraries: /proc/%d/maps: permission denied", v.pid))
	} else if len(v.libs) == 0 {
		ev = append(ev, "libraries: none of torch, TensorFlow, JAX or CUDA loaded")
	} else {
		var ls []string
		for _, l := range v.libs {
			ls = append(ls, l.Path)
		}
		ev = append(ev, "libraries: "+strings.Join(ls, ", "))
		var missing []string
		if v.libs.has(LibTorchCPU) && !v.libs.has(LibTorchCUDA) {
			missing = append(missing, "libtorch_cuda")
		}
		if !v.libs.has(LibCUDA) {
			missing = append(missing, "libcuda (CUDA not initialised)")
		}
		if len(missing) > 0 {
			ev = append(ev, "missing: "+strings.Join(missing, ", "))
		}
	}
	switch {
	case isPermission(v.environErr):
		ev = append(ev, "environ: permission denied")
	case v.environ != nil:
		var es []string
		for _, n := range []string{"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"} {
			if val, ok := v.environ[n]; ok {
				es = append(es, fmt.Sprintf("%s=%q", n, val))
			} else {
				es = append(es, n+" unset")
			}
		}
		for _, n := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
			if val, ok := v.environ[n]; ok {
				es = append(es, fmt.Sprintf("%s=%q", n, val))
			}
		}
		ev = append(ev, "environ: "+strings.Join(es, ", "))
	}
	if v.interp != nil {
		var pk []string
		for _, p := range v.interp.Packages {
			if p.Shadowed || strings.HasPrefix(p.Name, "nvidia-") {
				continue
			}
			s := p.Name + " " + p.Version
			switch {
			case p.CPUOnly:
				s += " (CPU-only)"
			case p.CUDA != "":
				s += " (CUDA " + p.CUDA + ")"
			}
			pk = append(pk, s)
		}
		desc := v.interp.Kind + " " + v.interp.Version
		if len(pk) > 0 {
			desc += ": " + strings.Join(pk, ", ")
		}
		ev = append(ev, "python: "+v.interp.Interpreter+" ("+desc+")")
	}
	for i := range ev {
		ev[i] = gpu.Sanitize(ev[i])
	}
	return ev
}

// childrenText describes the tree's other processes: "2 workers (4243,
// 4244)", "2 ranks (…)".
func (v *view) childrenText() string {
	if len(v.last.members) <= 1 {
		return ""
	}
	groups := map[string][]string{}
	var order []string
	for _, m := range v.last.members[1:] {
		key := m.Role
		if strings.HasPrefix(key, "rank ") {
			key = "rank"
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		label := strconv.Itoa(m.PID)
		if key == "rank" {
			label += " " + m.Role
		}
		groups[key] = append(groups[key], label)
	}
	sort.Strings(order)
	var parts []string
	for _, k := range order {
		n := len(groups[k])
		name := plural.Count(n, k) // "1 child", "15 children"
		switch k {
		case "worker":
			name = plural.Count(n, "worker") + " (DataLoader or multiprocessing)"
		case "rank":
			name = plural.Count(n, "torchrun rank")
		}
		ids := groups[k]
		if len(ids) > 8 {
			ids = append(ids[:8:8], "…")
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, strings.Join(ids, ", ")))
	}
	return strings.Join(parts, "; ")
}
