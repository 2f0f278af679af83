package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// State is the kind of a verdict.
type State string

// The states of a watched process.
const (
	StateGPU        State = "gpu"         // on a GPU and busy enough
	StateStarved    State = "gpu_starved" // on a GPU, but it idles while the CPU is saturated
	StateCPU        State = "cpu"         // not on a GPU; the findings say why
	StatePermission State = "permission"  // another user's process: it cannot be read
	StateExited     State = "exited"      // the process has ended (Report.Summary says how it went)
	StateUnknown    State = "unknown"     // nothing read yet
)

// Report is one verdict about the watched process, with its evidence. It
// is written as one JSON object per line by `gpuwizard watch --json`.
type Report struct {
	Time     time.Time `json:"time"`
	ElapsedS float64   `json:"elapsed_s"` // since the watch began
	PID      int       `json:"pid"`
	Command  string    `json:"command,omitempty"`
	Alive    bool      `json:"alive"`
	// OnGPU says whether the process or one of its children is among a
	// GPU's compute processes (for an ended process: at its last reading).
	OnGPU       bool              `json:"on_gpu"`
	State       State             `json:"state"`
	Verdict     string            `json:"verdict"`
	Cause       gpu.Cause         `json:"cause,omitempty"` // the cause of the first finding that is not ok
	GPUs        []GPUUse          `json:"gpus,omitempty"`
	CPU         CPUUse            `json:"cpu"`
	Processes   []Process         `json:"processes,omitempty"` // the watched process first, then its children
	Libraries   []Lib             `json:"libraries"`           // loaded libraries of interest
	Frameworks  []Framework       `json:"frameworks,omitempty"`
	Interpreter string            `json:"interpreter,omitempty"` // the Python it runs, as the doctor reads it
	Environ     map[string]string `json:"environ,omitempty"`     // the variables that decide what CUDA sees, as the process has them
	NVML        string            `json:"nvml"`                  // NVML's status: "ok", "library_not_found", ...
	Findings    []gpu.Finding     `json:"findings"`
	Evidence    []string          `json:"evidence"`
	Final       bool              `json:"final,omitempty"` // the last report of a watch
	Summary     *Summary          `json:"summary,omitempty"`

	early bool
}

// GPUUse is the watched tree's use of one GPU.
type GPUUse struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	// UtilizationPct is the GPU's mean utilisation over the window (the
	// whole GPU: other processes count too); nil before NVML reported one.
	UtilizationPct *float64 `json:"utilization_pct,omitempty"`
	UtilHistory    []int    `json:"utilization_history,omitempty"` // the window's readings, oldest first
	ProcessMiB     uint64   `json:"process_mib"`                   // the tree's memory on it
	MemoryUsedMiB  uint64   `json:"memory_used_mib"`
	MemoryTotalMiB uint64   `json:"memory_total_mib"`
	PIDs           []int    `json:"pids"` // the tree's processes NVML lists on it
}

// CPUUse is the tree's CPU use, averaged over the window. 100 % is one core.
type CPUUse struct {
	Percent     float64 `json:"percent"`
	MainPercent float64 `json:"main_percent"` // the watched process alone
	Cores       int     `json:"cores"`        // the CPUs it may run on
	Threads     int     `json:"threads"`      // in the whole tree
	Measured    bool    `json:"measured"`     // false until two readings were taken
}

// Process is one process of the watched tree.
type Process struct {
	PID        int     `json:"pid"`
	PPID       int     `json:"ppid"`
	Role       string  `json:"role"` // "main", "worker" (a DataLoader worker), "rank N" (torchrun), "child"
	Command    string  `json:"command"`
	Threads    int     `json:"threads"`
	CPUPercent float64 `json:"cpu_percent"` // since the previous reading
	GPUMiB     uint64  `json:"gpu_mib,omitempty"`
}

// Framework is a deep-learning framework the process has loaded.
type Framework struct {
	Name     string `json:"name"`              // "torch", "tensorflow", "jax"
	Version  string `json:"version,omitempty"` // from the interpreter's package
	Build    string `json:"build"`             // "cuda", "cpu", "rocm", "unknown"
	CUDA     string `json:"cuda,omitempty"`    // the CUDA it was built for
	Location string `json:"location,omitempty"`
	Evidence string `json:"evidence"` // the loaded library that shows it
}

// Summary is how a watch went, given when it ends.
type Summary struct {
	DurationS     float64  `json:"duration_s"`
	Readings      int      `json:"readings"`
	OnGPUReadings int      `json:"on_gpu_readings"`
	GPUs          []int    `json:"gpus,omitempty"` // the GPUs it was seen on
	PeakGPUMiB    uint64   `json:"peak_gpu_mib,omitempty"`
	MeanUtilPct   *float64 `json:"mean_utilization_pct,omitempty"` // of its GPUs, over the readings it was on them
	MeanCPUPct    float64  `json:"mean_cpu_pct"`
	PeakCPUPct    float64  `json:"peak_cpu_pct"`
	LastVerdict   string   `json:"last_verdict"`
	LastState     State    `json:"last_state"`
	Ended         bool     `json:"ended"`                 // the process ended (rather than the watch being stopped)
	ExitStatus    *int     `json:"exit_status,omitempty"` // of a command watch started
	Text          string   `json:"text"`
}

// summaryAcc adds the readings up for the summary.
type summaryAcc struct {
	readings, onGPU int
	cpuSum          float64
	cpuN            int
	cpuPeak         float64
	utilSum         float64
	utilN           int
	peakMiB         uint64
	gpus            map[int]bool
	lastVerdict     string
	lastState       State
	lastOnGPU       bool
}

func (s *summaryAcc) add(r reading) {
	s.readings++
	if r.cpuOK {
		s.cpuSum += r.cpuPct
		s.cpuN++
		s.cpuPeak = math.Max(s.cpuPeak, r.cpuPct)
	}
	listed := r.listed()
	if len(listed) == 0 {
		return
	}
	s.onGPU++
	if s.gpus == nil {
		s.gpus = map[int]bool{}
	}
	var mib uint64
	for _, d := range r.devs {
		pids, ok := listed[d.Index]
		if !ok {
			continue
		}
		s.gpus[d.Index] = true
		for _, m := range pids {
			mib += m
		}
		if d.UtilOK {
			s.utilSum += float64(d.Util)
			s.utilN++
		}
	}
	s.peakMiB = max(s.peakMiB, mib)
}

// Report judges the readings so far: where the process runs, why, and the
// evidence. ctx bounds the doctor's probe of the machine (once per
// Watcher).
func (w *Watcher) Report(ctx context.Context) Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.o.Now()
	rep := Report{Time: now.UTC(), PID: w.pid, Alive: w.first != nil && !w.ended, Libraries: []Lib{}, Findings: []gpu.Finding{}, Evidence: []string{}}
	if !w.started.IsZero() {
		rep.ElapsedS = round1(now.Sub(w.started).Seconds())
	}
	if w.first == nil {
		rep.State, rep.Verdict = StateUnknown, fmt.Sprintf("Process %d has not been read yet", w.pid)
		return rep
	}
	v := w.view(ctx)
	j := judge(v)
	rep.Command = v.command()
	rep.OnGPU, rep.State, rep.Verdict, rep.Findings = j.onGPU, j.state, j.verdict, j.findings
	for _, f := range j.findings {
		if f.Severity != gpu.SevOK {
			rep.Cause = f.Cause
			break
		}
	}
	rep.GPUs = v.gpuUses()
	rep.CPU = CPUUse{Percent: round1(v.cpuMean), MainPercent: round1(v.mainMean), Cores: v.cores, Threads: v.threads(), Measured: v.cpuOK}
	rep.Processes = v.processes()
	rep.Libraries = append(rep.Libraries, v.libs...)
	rep.Frameworks = v.frameworks
	if v.interp != nil {
		rep.Interpreter = v.interp.Interpreter
	}
	rep.Environ = v.cudaEnviron()
	rep.NVML = v.nvml
	rep.Evidence = v.evidence()
	rep.early = rep.Alive && len(v.libs) == 0 && !isPermission(v.mapsErr) && v.looksPython()
	w.sum.lastVerdict, w.sum.lastState, w.sum.lastOnGPU = rep.Verdict, rep.State, rep.OnGPU
	if w.ended {
		rep.Final = true
		rep.Summary = w.summary(now, true)
		rep.State, rep.Verdict = StateExited, rep.Summary.Text
	}
	return rep
}

// Summary is how the watch went so far (the final report's summary when
// the process has ended). The verdicts it names are those of the last
// Report.
func (w *Watcher) Summary() Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	return *w.summary(w.o.Now(), w.ended)
}

func (w *Watcher) summary(now time.Time, ended bool) *Summary {
	s := &Summary{Readings: w.sum.readings, OnGPUReadings: w.sum.onGPU, PeakGPUMiB: w.sum.peakMiB,
		PeakCPUPct: round1(w.sum.cpuPeak), LastVerdict: w.sum.lastVerdict, LastState: w.sum.lastState, Ended: ended, ExitStatus: w.exit}
	end := now
	if ended && !w.endedAt.IsZero() {
		end = w.endedAt
	}
	if !w.started.IsZero() {
		s.DurationS = round1(end.Sub(w.started).Seconds())
	}
	if w.sum.cpuN > 0 {
		s.MeanCPUPct = round1(w.sum.cpuSum / float64(w.sum.cpuN))
	}
	if w.sum.utilN > 0 {
		u := round1(w.sum.utilSum / float64(w.sum.utilN))
		s.MeanUtilPct = &u
	}
	for g := range w.sum.gpus {
		s.GPUs = append(s.GPUs, g)
	}
	sort.Ints(s.GPUs)
	s.Text = summaryText(w.pid, w.commandName(), s)
	return s
}

func (w *Watcher) commandName() string {
	if w.first == nil {
		return ""
	}
	return shortCommand(w.first.Cmdline, w.first.Comm)
}

// summaryText says how the watch went, in one paragraph.
func summaryText(pid int, cmd string, s *Summary) string {
	var b strings.Builder
	who := fmt.Sprintf("Process %d", pid)
	if cmd != "" {
		who += " (" + cmd + ")"
	}
	dur := (time.Duration(s.DurationS*10) * time.Second / 10).Round(time.Second)
	if s.Ended {
		fmt.Fprintf(&b, "%s ended after %s", who, dur)
		if s.ExitStatus != nil {
			fmt.Fprintf(&b, " with exit status %d", *s.ExitStatus)
		}
	} else {
		fmt.Fprintf(&b, "%s, watched for %s", who, dur)
	}
	b.WriteString(". ")
	switch {
	case s.Readings == 0:
		b.WriteString("It was not read once.")
	case s.OnGPUReadings == 0:
		fmt.Fprintf(&b, "It was on no GPU in %s", plural.Count(s.Readings, "reading"))
		if s.LastVerdict != "" {
			b.WriteString(" (" + strings.TrimSuffix(s.LastVerdict, ".") + ")")
		}
		b.WriteString(".")
	default:
		var gs []string
		for _, g := range s.GPUs {
			gs = append(gs, fmt.Sprint(g))
		}
		fmt.Fprintf(&b, "It was on GPU %s in %d of %s, with up to %d MiB", strings.Join(gs, ", "), s.OnGPUReadings, plural.Count(s.Readings, "reading"), s.PeakGPUMiB)
		if s.MeanUtilPct != nil {
			fmt.Fprintf(&b, " and the GPU %.0f %% busy on average", *s.MeanUtilPct)
		}
		b.WriteString(".")
		if s.LastState == StateStarved {
			b.WriteString(" At the end the GPU was starved (data loading was the bottleneck).")
		}
	}
	if s.PeakCPUPct > 0 {
		fmt.Fprintf(&b, " CPU: %.0f %% on average, %.0f %% at most (100 %% is one core).", s.MeanCPUPct, s.PeakCPUPct)
	}
	return b.String()
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// view is what the judge sees: one process tree, its GPUs and the doctor.
type view struct {
	pid        int
	first      proc
	last       reading
	hist       []reading
	uid        int
	user       string
	exe, cwd   string
	exeErr     error
	mapsErr    error
	environErr error
	environ    map[string]string
	libs       libSet
	ever       map[string]Lib
	nvml       string
	nvmlErr    string
	listed     map[int]map[int]uint64
	cpuMean    float64
	mainMean   float64
	cpuOK      bool
	cores      int
	window     time.Duration
	elapsed    time.Duration
	facts      *gpu.Facts
	diag       *gpu.Report
	interp     *gpu.PythonEnv
	frameworks []Framework
	foreign    bool // NVML lists PIDs /proc does not have
}

func (w *Watcher) view(ctx context.Context) *view {
	v := &view{pid: w.pid, first: *w.first, last: w.last, hist: w.hist, uid: w.first.UID,
		exe: w.exe, cwd: w.cwd, exeErr: w.exeErr, mapsErr: w.mapsErr, environErr: w.environErr, environ: w.environ,
		libs: w.libs(), ever: w.everLoaded, nvml: w.last.nvml, nvmlErr: w.last.nvmlErr, listed: w.last.listed(),
		window: w.o.Window}
	for _, d := range w.last.devs {
		for pid := range d.Procs {
			if _, err := w.fs.stat(pid); errors.Is(err, ErrNoProcess) {
				v.foreign = true
			}
		}
	}
	if n := len(w.hist); n > 0 {
		v.elapsed = w.hist[n-1].at.Sub(w.started)
	}
	if len(w.last.members) > 0 {
		v.uid = w.last.members[0].UID
	}
	v.user = w.fs.userName(v.uid)
	var cpuN, mainN int
	for _, r := range w.hist {
		if r.cpuOK {
			v.cpuMean += r.cpuPct
			v.mainMean += r.mainPct
			cpuN++
			mainN++
		}
	}
	if cpuN > 0 {
		v.cpuMean /= float64(cpuN)
		v.mainMean /= float64(mainN)
		v.cpuOK = true
	}
	v.cores = w.first.CPUs
	if len(w.last.members) > 0 && w.last.members[0].CPUs > 0 {
		v.cores = w.last.members[0].CPUs
	}
	if v.cores == 0 {
		v.cores = w.numCPU
	}
	if v.cores == 0 {
		v.cores = runtime.NumCPU()
	}
	v.facts, v.diag = w.doctor(ctx)
	v.interp = w.interpreter()
	v.frameworks = frameworks(v.libs, v.interp, w.allFiles())
	return v
}

// frameworks names the frameworks the tree has loaded, with their builds
// as the libraries and the interpreter's package files show them.
func frameworks(libs libSet, env *gpu.PythonEnv, files []string) []Framework {
	var out []Framework
	pkgAt := func(names []string, site string) (gpu.Package, bool) {
		if env == nil {
			return gpu.Package{}, false
		}
		for _, pk := range env.Packages {
			if gpu.Contains(names, pk.Name) && (site == "" || pk.Location == site) {
				return pk, true
			}
		}
		for _, n := range names {
			if pk, ok := env.Package(n); ok {
				return pk, true
			}
		}
		return gpu.Package{}, false
	}
	if cpu, ok := libs.first(LibTorchCPU); ok {
		fw := Framework{Name: "torch", Build: "cpu", Evidence: cpu.Path}
		if l, ok := libs.first(LibTorchCUDA); ok {
			fw.Build, fw.Evidence = "cuda", l.Path
		} else if l, ok := libs.first(LibTorchHIP); ok {
			fw.Build, fw.Evidence = "rocm", l.Path
		}
		site := frameworkSite(files, "torch")
		if pk, ok := pkgAt([]string{"torch"}, site); ok {
			fw.Version, fw.CUDA, fw.Location = pk.Version, pk.CUDA, pk.Location
		}
		out = append(out, fw)
	}
	if l, ok := libs.first(LibTensorFlow); ok {
		fw := Framework{Name: "tensorflow", Build: "unknown", Evidence: l.Path}
		site := frameworkSite(files, "tensorflow")
		if pk, ok := pkgAt([]string{"tensorflow", "tensorflow-gpu", "tf-nightly", "tensorflow-intel", "tensorflow-cpu"}, site); ok {
			fw.Version, fw.CUDA, fw.Location = pk.Version, pk.CUDA, pk.Location
			switch {
			case pk.CPUOnly:
				fw.Build = "cpu"
			case pk.CUDA != "":
				fw.Build = "cuda"
			}
		}
		out = append(out, fw)
	}
	if l, ok := libs.first(LibJAX); ok {
		fw := Framework{Name: "jax", Build: "cpu", Evidence: l.Path}
		if p, ok := libs.first(LibJAXCUDA); ok {
			fw.Build, fw.Evidence = "cuda", p.Path
		}
		if pk, ok := pkgAt([]string{"jaxlib"}, ""); ok {
			fw.Version, fw.CUDA, fw.Location = pk.Version, pk.CUDA, pk.Location
			if pk.CUDA != "" {
				fw.Build = "cuda"
			}
		}
		out = append(out, fw)
	}
	return out
}

func (v *view) framework(name string) (Framework, bool) {
	for _, f := range v.frameworks {
		if f.Name == name {
			return f, true
		}
	}
	return Framework{}, false
}

// looksPython: the tree runs a Python, yolo or torchrun, which will load
// a framework.
func (v *view) looksPython() bool {
	for _, m := range v.last.members {
		if strings.HasPrefix(m.Comm, "python") || m.Comm == "yolo" || m.Comm == "torchrun" {
			return true
		}
		for i, a := range m.Cmdline {
			if i > 1 {
				break
			}
			if b := baseName(a); strings.HasPrefix(b, "python") || b == "yolo" || b == "torchrun" {
				return true
			}
		}
	}
	return false
}

func (v *view) command() string { return shortCommand(v.first.Cmdline, v.first.Comm) }

// shortCommand is a command line for people: the program's base name and
// its arguments, cut at 160 characters.
func shortCommand(cmdline []string, comm string) string {
	if len(cmdline) == 0 {
		return "[" + comm + "]"
	}
	parts := append([]string{baseName(cmdline[0])}, cmdline[1:]...)
	s := gpu.Sanitize(strings.Join(parts, " "))
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func (v *view) threads() int {
	n := 0
	for _, m := range v.last.members {
		n += m.Threads
	}
	return n
}

func (v *view) processes() []Process {
	var out []Process
	for _, m := range v.last.members {
		p := Process{PID: m.PID, PPID: m.PPID, Role: m.Role, Command: shortCommand(m.Cmdline, m.Comm), Threads: m.Threads, CPUPercent: round1(m.CPUPct)}
		for _, pids := range v.listed {
			p.GPUMiB += pids[m.PID]
		}
		out = append(out, p)
	}
	return out
}

// utilStat is one GPU's utilisation over the window.
type utilStat struct {
	mean float64
	n    int
	hist []int
}

func (v *view) util(index int) utilStat {
	var s utilStat
	for _, r := range v.hist {
		for _, d := range r.devs {
			if d.Index == index && d.UtilOK {
				s.hist = append(s.hist, d.Util)
				s.mean += float64(d.Util)
				s.n++
			}
		}
	}
	if s.n > 0 {
		s.mean /= float64(s.n)
	}
	return s
}

func (v *view) device(index int) (device, bool) {
	for _, d := range v.last.devs {
		if d.Index == index {
			return d, true
		}
	}
	return device{}, false
}

func (v *view) gpuUses() []GPUUse {
	var idx []int
	for i := range v.listed {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []GPUUse
	for _, i := range idx {
		d, _ := v.device(i)
		u := GPUUse{Index: i, Name: d.Name, MemoryUsedMiB: d.MemUsedMiB, MemoryTotalMiB: d.MemTotalMiB}
		for pid, mib := range v.listed[i] {
			u.ProcessMiB += mib
			u.PIDs = append(u.PIDs, pid)
		}
		sort.Ints(u.PIDs)
		if st := v.util(i); st.n > 0 {
			m := round1(st.mean)
			u.UtilizationPct, u.UtilHistory = &m, st.hist
		}
		out = append(out, u)
	}
	return out
}

// envNames are the variables of the process that decide what CUDA sees.
var envNames = []string{"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH", "LD_PRELOAD", "VIRTUAL_ENV", "CONDA_PREFIX"}

func (v *view) cudaEnviron() map[string]string {
	if v.environ == nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range envNames {
		if val, ok := v.environ[n]; ok {
			out[n] = val
		}
	}
	return out
}

// Early reports whether the process is a Python (or yolo, torchrun) that
// has loaded no framework or CUDA library yet: still importing torch, a
// verdict now lacks the evidence that comes within seconds.
func (r Report) Early() bool { return r.early }
