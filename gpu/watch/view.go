package watch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// view is what the judge sees: one process tree, its GPUs and the doctor.
type view struct {
	pid           int // the watched process
	asked         int
	led           []string
	id            identity // the training process
	src           source
	last          reading
	hist          []reading
	readings      int
	uid           int
	user          string
	libs          libSet
	nvml          string
	nvmlErr       string
	listed        map[int]map[int]uint64
	dev           devUse
	devRead       bool // the source reads open device files
	cpuMean       float64
	mainMean      float64
	cpuOK         bool
	memberCPU     map[int]float64 // PID → mean CPU over the window
	waitMax       float64         // the most a process of the tree waited for a CPU (% of the time)
	waitOK        bool
	limit         cpuLimit
	throttledMean float64
	thrOK         bool
	cores         int
	window        time.Duration
	elapsed       time.Duration
	age           time.Duration // since the process started (or, unknown, since the watch began)
	ageKnown      bool
	setupGrace    time.Duration
	facts         *gpu.Facts
	diag          *gpu.Report
	interp        *gpu.PythonEnv
	frameworks    []Framework
	foreign       map[int][]int // GPU index → PIDs NVML lists that this machine's process table does not show
	container     string
	wsl           bool
	minors        map[string]int // PCI bus id → /dev/nvidiaN
}

func (w *Watcher) view(ctx context.Context) *view {
	v := &view{pid: w.pid, asked: w.asked, led: w.led, id: w.id, src: w.src, last: w.last, hist: w.hist,
		readings: w.sum.readings, uid: w.first.UID, libs: w.libs(), nvml: w.last.nvml, nvmlErr: w.last.nvmlErr,
		listed: w.last.listed(), window: w.o.Window, setupGrace: w.o.SetupGrace, dev: w.deviceUse()}
	_, v.devRead = w.src.(deviceReader)
	if gn, ok := w.src.(gpuNodeReader); ok {
		v.minors = gn.gpuMinors()
	}
	v.foreign = w.foreignPIDs()
	if n := len(w.hist); n > 0 {
		v.elapsed = w.hist[n-1].at.Sub(w.started)
	}
	v.age, v.ageKnown = v.elapsed, false
	if p := w.idProcOf(); !p.Started.IsZero() {
		v.age, v.ageKnown = max(w.o.Now().Sub(p.Started), 0), true
	}
	idp := w.idProcOf()
	if idp.UID >= 0 || w.first.UID < 0 {
		v.uid = idp.UID
	}
	v.user = w.src.userName(idp)
	v.cpuStats(w.hist)
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
	if v.facts != nil {
		v.container, v.wsl = v.facts.Host.Container, v.facts.Host.WSL == 2
	}
	v.wsl = v.wsl || v.dev.has(devDXG)
	v.interp = w.interpreter()
	v.frameworks = frameworks(v.libs, v.interp, w.allFiles())
	return v
}

// idProcOf is the training process at the last reading.
func (w *Watcher) idProcOf() proc {
	for _, m := range w.last.members {
		if m.PID == w.id.pid {
			return m.proc
		}
	}
	if len(w.last.members) > 0 {
		return w.last.members[0].proc
	}
	return *w.first
}

// idProc is the training process as the view saw it.
func (v *view) idProc() proc {
	for _, m := range v.last.members {
		if m.PID == v.id.pid {
			return m.proc
		}
	}
	return proc{PID: v.id.pid, Comm: v.id.comm, Cmdline: v.id.cmdline, UID: -1}
}

// foreignPIDs lists, per GPU, the processes NVML lists that this
// machine's process table does not show (the host's PIDs, seen from a
// container).
func (w *Watcher) foreignPIDs() map[int][]int {
	out := map[int][]int{}
	for _, d := range w.last.devs {
		for pid := range d.Procs {
			if _, err := w.src.proc(pid); errors.Is(err, ErrNoProcess) {
				out[d.Index] = append(out[d.Index], pid)
			}
		}
		sort.Ints(out[d.Index])
	}
	return out
}

// cpuStats averages the tree's CPU use, its run-queue waits and its
// cgroup's throttling over the window.
func (v *view) cpuStats(hist []reading) {
	var cpuN, thrN int
	sums, counts := map[int]float64{}, map[int]int{}
	waits, waitN := map[int]float64{}, map[int]int{}
	for _, r := range hist {
		if r.cpuOK {
			v.cpuMean += r.cpuPct
			v.mainMean += r.mainPct
			cpuN++
		}
		if r.thrOK {
			v.throttledMean += r.throttled
			thrN++
		}
		for _, m := range r.members {
			if m.CPUOK {
				sums[m.PID] += m.CPUPct
				counts[m.PID]++
			}
			if m.WaitOK {
				waits[m.PID] += m.WaitPct
				waitN[m.PID]++
			}
		}
	}
	if cpuN > 0 {
		v.cpuMean /= float64(cpuN)
		v.mainMean /= float64(cpuN)
		v.cpuOK = true
	}
	if thrN > 0 {
		v.throttledMean /= float64(thrN)
		v.thrOK = true
	}
	v.memberCPU = map[int]float64{}
	for pid, s := range sums {
		v.memberCPU[pid] = s / float64(counts[pid])
	}
	for pid, s := range waits {
		v.waitMax, v.waitOK = max(v.waitMax, s/float64(waitN[pid])), true
	}
	v.limit = v.last.limit
}

// workerCPU is the number of DataLoader (or multiprocessing) workers in
// the tree and their mean CPU use over the window.
func (v *view) workerCPU() (int, float64) {
	n, sum := 0, 0.0
	for _, m := range v.last.members {
		if m.Role != "worker" {
			continue
		}
		if c, ok := v.memberCPU[m.PID]; ok {
			n++
			sum += c
		}
	}
	if n == 0 {
		return 0, 0
	}
	return n, sum / float64(n)
}

func (v *view) cpuUse() CPUUse {
	c := CPUUse{Percent: round1(v.cpuMean), MainPercent: round1(v.mainMean), Cores: v.cores, Threads: v.threads(), Measured: v.cpuOK, CgroupCores: round1(v.limit.Cores)}
	if v.thrOK {
		t := round1(v.throttledMean)
		c.ThrottledPct = &t
	}
	if v.waitOK {
		w := round1(v.waitMax)
		c.RunQueueWait = &w
	}
	if n, mean := v.workerCPU(); n > 0 {
		m := round1(mean)
		c.WorkersPercent = &m
	}
	return c
}

// where names where a fact of pid was read: "/proc/4242/environ", or the
// source's own words.
func (v *view) where(pid int, what string) string { return place(v.src, pid, what) }

// visibleEvidence is the evidence of CUDA_VISIBLE_DEVICES hiding the GPUs.
func (v *view) visibleEvidence(shown string) []string {
	ev := []string{fmt.Sprintf("%s: %s", v.where(v.id.pid, "environ"), shown),
		fmt.Sprintf("NVML sees %s; CUDA in this process sees none", plural.Count(len(v.last.devs), "GPU"))}
	if len(v.id.before) > 0 {
		ev = append(ev, fmt.Sprintf("the process was started as %s and then exec'd its current program: the variable comes from there", strings.Join(v.id.before, ", then ")))
	}
	return ev
}

func (v *view) isYOLO() bool {
	for i, a := range v.id.cmdline {
		if i > 1 {
			break
		}
		if b := programBase(a); b == "yolo" || b == "ultralytics" {
			return true
		}
	}
	return v.id.comm == "yolo"
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

// command is the training process's command for people.
func (v *view) command() string {
	if v.id.pid != v.pid {
		for _, m := range v.last.members {
			if m.PID == v.pid {
				return shortCommand(m.Cmdline, m.Comm)
			}
		}
	}
	return shortCommand(v.id.cmdline, v.id.comm)
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
		p := Process{PID: m.PID, PPID: m.PPID, Role: m.Role, Command: shortCommand(m.Cmdline, m.Comm), Threads: m.Threads, CPUPercent: round1(m.CPUPct), Devices: m.Devices}
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

// memNA reports whether NVML does not know pid's memory on GPU index.
func (v *view) memNA(index, pid int) bool {
	d, ok := v.device(index)
	return ok && d.MemNA[pid]
}

// gpuUses are the GPUs NVML lists the tree on.
func (v *view) gpuUses() []GPUUse {
	var idx []int
	for i := range v.listed {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []GPUUse
	for _, i := range idx {
		d, _ := v.device(i)
		u := GPUUse{Index: i, Name: d.Name, Seen: SeenNVML, MemoryUsedMiB: d.MemUsedMiB, MemoryTotalMiB: d.MemTotalMiB, ProcessMemoryKnown: true}
		for pid, mib := range v.listed[i] {
			u.ProcessMiB += mib
			u.PIDs = append(u.PIDs, pid)
			if d.MemNA[pid] {
				u.ProcessMemoryKnown = false
			}
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

// unseenGPUs are the GPUs only the device files show the tree on.
func (v *view) unseenGPUs() []int {
	u, _ := v.unseenUse()
	return u.gpus
}

// deviceGPUUses describes GPUs seen through device files only.
func (v *view) deviceGPUUses(idx []int) []GPUUse {
	var out []GPUUse
	for _, i := range idx {
		d, _ := v.device(i)
		u := GPUUse{Index: i, Name: d.Name, Seen: SeenDevice, MemoryUsedMiB: d.MemUsedMiB, MemoryTotalMiB: d.MemTotalMiB}
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
	if v.id.environ == nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range envNames {
		if val, ok := v.id.environ[n]; ok {
			out[n] = cutAt(val, maxLine) // as the process has it, but not 128 KiB of it
		}
	}
	return out
}
