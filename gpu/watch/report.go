package watch

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
)

// State is the kind of a verdict.
type State string

// The states of a watched process.
const (
	StateGPU         State = "gpu"          // on a GPU and busy (or seen there through its device files)
	StateStarved     State = "gpu_starved"  // on a GPU, but it idles while the CPU side is saturated
	StateIdle        State = "idle"         // doing nothing: on a GPU it holds memory, off one it holds none
	StateSettingUp   State = "setting_up"   // young, no GPU context yet: importing, building the dataset, downloading
	StateCPU         State = "cpu"          // not on a GPU; the findings say why
	StateNotTraining State = "not_training" // no framework, no CUDA, not a training command
	StatePermission  State = "permission"   // another user's process: it cannot be read
	StateExited      State = "exited"       // the process has ended (Report.Summary says how it went)
	StateUnknown     State = "unknown"      // nothing read yet
)

// How GPU use was seen (GPUUse.Seen).
const (
	SeenNVML   = "nvml"        // NVML lists the process by its PID
	SeenDevice = "device_file" // only its GPU device files show it (a container, WSL 2, MIG)
)

// Report is one verdict about the watched process, with its evidence. It
// is written as one JSON object per line by `gpuwizard watch --json`.
type Report struct {
	Time     time.Time `json:"time"`
	ElapsedS float64   `json:"elapsed_s"`       // since the watch began
	AgeS     float64   `json:"age_s,omitempty"` // since the process started, when known
	PID      int       `json:"pid"`
	// AskedPID is the PID asked for when the watch led from it (a
	// DataLoader worker, a rank) to the training's main process, PID.
	AskedPID int    `json:"asked_pid,omitempty"`
	Command  string `json:"command,omitempty"`
	Alive    bool   `json:"alive"`
	// OnGPU says whether the process or one of its children uses a GPU:
	// NVML lists it, or (in a container, under WSL 2, with MIG) its device
	// files show it (for an ended process: at its last reading).
	OnGPU   bool      `json:"on_gpu"`
	State   State     `json:"state"`
	Verdict string    `json:"verdict"`
	Cause   gpu.Cause `json:"cause,omitempty"` // the cause of the first finding that is not ok
	// Unseen lists what could not be seen (per-process memory under WSL 2,
	// which PID is which in a container, utilisation under MIG).
	Unseen      []string          `json:"unseen,omitempty"`
	GPUs        []GPUUse          `json:"gpus,omitempty"`
	CPU         CPUUse            `json:"cpu"`
	Processes   []Process         `json:"processes,omitempty"` // the watched process first, then its children
	Devices     []string          `json:"devices,omitempty"`   // GPU device files the tree holds open or maps
	Libraries   []Lib             `json:"libraries"`           // loaded libraries of interest
	Frameworks  []Framework       `json:"frameworks,omitempty"`
	Interpreter string            `json:"interpreter,omitempty"` // the Python it runs, as the doctor reads it
	Environ     map[string]string `json:"environ,omitempty"`     // the variables that decide what CUDA sees, as the process has them
	NVML        string            `json:"nvml"`                  // NVML's status: "ok", "library_not_found", ...
	Findings    []gpu.Finding     `json:"findings"`
	Evidence    []string          `json:"evidence"`
	// Settled is set by `watch --once`: whether the state settled (the
	// same verdict for a while, not setting up) within its window.
	Settled *bool    `json:"settled,omitempty"`
	Final   bool     `json:"final,omitempty"` // the last report of a watch
	Summary *Summary `json:"summary,omitempty"`
}

// GPUUse is the watched tree's use of one GPU.
type GPUUse struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	// Seen is how the use was seen: "nvml" (by PID) or "device_file".
	Seen string `json:"seen"`
	// UtilizationPct is the GPU's mean utilisation over the window (the
	// whole GPU: other processes count too); nil when NVML reports none.
	UtilizationPct     *float64 `json:"utilization_pct,omitempty"`
	UtilHistory        []int    `json:"utilization_history,omitempty"` // the window's readings, oldest first
	ProcessMiB         uint64   `json:"process_mib"`                   // the tree's memory on it
	ProcessMemoryKnown bool     `json:"process_memory_known"`          // false under WDDM and WSL 2, and when seen through device files
	MemoryUsedMiB      uint64   `json:"memory_used_mib"`
	MemoryTotalMiB     uint64   `json:"memory_total_mib"`
	PIDs               []int    `json:"pids,omitempty"` // the tree's processes NVML lists on it
}

// CPUUse is the tree's CPU use, averaged over the window. 100 % is one core.
type CPUUse struct {
	Percent        float64  `json:"percent"`
	MainPercent    float64  `json:"main_percent"`              // the watched process alone
	Cores          int      `json:"cores"`                     // the CPUs it may run on (its affinity)
	CgroupCores    float64  `json:"cgroup_cores,omitempty"`    // its cgroup's CPU limit (Docker --cpus), when set
	ThrottledPct   *float64 `json:"throttled_pct,omitempty"`   // periods its cgroup throttled it in
	RunQueueWait   *float64 `json:"run_queue_wait,omitempty"`  // the most any process of the tree waited for a CPU (% of the time)
	WorkersPercent *float64 `json:"workers_percent,omitempty"` // the mean of its DataLoader workers
	Threads        int      `json:"threads"`                   // in the whole tree
	Measured       bool     `json:"measured"`                  // false until two readings were taken
}

// Process is one process of the watched tree.
type Process struct {
	PID        int      `json:"pid"`
	PPID       int      `json:"ppid"`
	Role       string   `json:"role"` // "main", "worker" (a DataLoader worker), "rank N" (torchrun), "child"
	Command    string   `json:"command"`
	Threads    int      `json:"threads"`
	CPUPercent float64  `json:"cpu_percent"` // since the previous reading
	GPUMiB     uint64   `json:"gpu_mib,omitempty"`
	Devices    []string `json:"devices,omitempty"` // GPU device files it holds open
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
	OnGPUReadings int      `json:"on_gpu_readings"` // readings in which NVML listed it by PID
	GPUs          []int    `json:"gpus,omitempty"`  // the GPUs it was seen on
	PeakGPUMiB    uint64   `json:"peak_gpu_mib,omitempty"`
	MeanUtilPct   *float64 `json:"mean_utilization_pct,omitempty"` // of its GPUs, over the readings it was on them
	MeanCPUPct    float64  `json:"mean_cpu_pct"`
	PeakCPUPct    float64  `json:"peak_cpu_pct"`
	LastVerdict   string   `json:"last_verdict"`
	LastState     State    `json:"last_state"`
	LastOnGPU     bool     `json:"last_on_gpu"`
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
// Watcher, again after an exec that changed the environment).
func (w *Watcher) Report(ctx context.Context) Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.o.Now()
	rep := Report{Time: now.UTC(), PID: w.pid, Alive: w.first != nil && !w.ended, Libraries: []Lib{}, Findings: []gpu.Finding{}, Evidence: []string{}}
	if w.asked != w.pid {
		rep.AskedPID = w.asked
	}
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
	if v.ageKnown {
		rep.AgeS = round1(v.age.Seconds())
	}
	rep.OnGPU, rep.State, rep.Verdict, rep.Findings, rep.Unseen = j.onGPU, j.state, j.verdict, j.findings, j.unseen
	for _, f := range j.findings {
		if f.Severity != gpu.SevOK {
			rep.Cause = f.Cause
			break
		}
	}
	if rep.State == StateSettingUp || rep.State == StateIdle || rep.State == StateNotTraining {
		rep.Cause = ""
	}
	rep.GPUs = v.gpuUses()
	if len(rep.GPUs) == 0 && j.onGPU {
		rep.GPUs = v.deviceGPUUses(v.unseenGPUs())
	}
	rep.CPU = v.cpuUse()
	rep.Processes = v.processes()
	rep.Devices = v.dev.evidence()
	rep.Libraries = append(rep.Libraries, v.libs...)
	rep.Frameworks = v.frameworks
	if v.interp != nil {
		rep.Interpreter = v.interp.Interpreter
	}
	rep.Environ = v.cudaEnviron()
	rep.NVML = v.nvml
	rep.Evidence = v.evidence()
	if !w.ended || w.sum.lastVerdict == "" {
		// The verdict of the last reading while it ran: a process that is
		// ending unmaps its libraries, and is judged no more.
		w.sum.lastVerdict, w.sum.lastState, w.sum.lastOnGPU = rep.Verdict, rep.State, rep.OnGPU
	}
	if w.ended {
		rep.Final = true
		rep.Summary = w.summary(now, true)
		rep.State, rep.Verdict = StateExited, rep.Summary.Text
	}
	rep.escape()
	return rep
}

// escape makes every line of the report that holds names the process
// chose (its command line, program, folder, environment, libraries)
// printable on one line: a newline, an escape sequence or a
// bidirectional override in them becomes a visible escape, in the text,
// the JSON and the window alike, and a line of a megabyte is cut. Fix
// texts keep their own line breaks.
func (r *Report) escape() {
	r.Command, r.Verdict = line(r.Command), line(r.Verdict)
	r.Evidence = lines(r.Evidence)
	for i := range r.Processes {
		r.Processes[i].Command = line(r.Processes[i].Command)
	}
	fs := make([]gpu.Finding, len(r.Findings))
	for i, f := range r.Findings {
		f.Title, f.Evidence = line(f.Title), lines(f.Evidence)
		steps := make([]gpu.Step, len(f.Fix))
		for j, s := range f.Fix {
			steps[j] = gpu.Step{Text: printable.Text(s.Text), Command: line(s.Command)}
		}
		f.Fix = steps
		fs[i] = f
	}
	r.Findings = fs
	if r.Summary != nil {
		s := *r.Summary
		s.Text, s.LastVerdict = line(s.Text), line(s.LastVerdict)
		r.Summary = &s
	}
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
		PeakCPUPct: round1(w.sum.cpuPeak), LastVerdict: w.sum.lastVerdict, LastState: w.sum.lastState, LastOnGPU: w.sum.lastOnGPU,
		Ended: ended, ExitStatus: w.exit}
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

// commandName is the watched process's command for people: as read, or
// as the caller started it when it ended before it could be read.
func (w *Watcher) commandName() string {
	if w.first != nil && len(w.first.Cmdline) > 0 {
		return shortCommand(w.first.Cmdline, w.first.Comm)
	}
	if len(w.command) > 0 {
		return shortCommand(w.command, "")
	}
	if w.first != nil {
		return shortCommand(nil, w.first.Comm)
	}
	return ""
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
	last := ""
	if s.LastVerdict != "" {
		last = " (" + strings.TrimSuffix(s.LastVerdict, ".") + ")"
	}
	switch {
	case s.Readings == 0:
		b.WriteString("It was not read once.")
	case s.OnGPUReadings == 0 && s.LastOnGPU:
		fmt.Fprintf(&b, "NVML did not name it in %s, but its device files showed it on a GPU%s.", plural.Count(s.Readings, "reading"), last)
	case s.OnGPUReadings == 0:
		fmt.Fprintf(&b, "It was on no GPU in %s%s.", plural.Count(s.Readings, "reading"), last)
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

// shortCommand is a command line for people: the program's base name and
// its arguments, cut at 160 characters; the short name when the command
// line is empty (a process that is ending).
func shortCommand(cmdline []string, comm string) string {
	if len(cmdline) == 0 {
		return printable.String(comm)
	}
	parts := append([]string{baseName(cmdline[0])}, cmdline[1:]...)
	s := printable.String(strings.Join(parts, " "))
	if len(s) > 160 {
		s = cutAt(s, 157) + "…"
	}
	return s
}

// cutAt cuts s to at most n bytes at a character's start: a name's UTF-8
// is never split.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxLine bounds a line of the report: a command line or an environment
// of a megabyte is shown by its start.
const maxLine = 2000

// line is one printable line of the report, at most maxLine bytes (and
// what was cut, counted).
func line(s string) string {
	s = printable.String(s)
	if len(s) <= maxLine {
		return s
	}
	kept := cutAt(s, maxLine)
	return fmt.Sprintf("%s… (%d more bytes)", kept, len(s)-len(kept))
}

func lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = line(s)
	}
	return out
}

// baseName is the last element of a Unix or Windows path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
