// Package watch looks at a running training and says where it really runs:
// on which GPU and how busy, or on the CPU and why, in the doctor's
// vocabulary (gpu.Finding with its causes).
//
// The evidence comes from NVML (is the process or one of its children
// among a GPU's compute processes, with how much memory; each GPU's memory
// and utilisation over time), from the process table (Linux's /proc, the
// Win32 process API on Windows: CPU use and threads; the libraries the
// process has loaded: libtorch_cuda.so or only libtorch_cpu.so,
// torch_cuda.dll, the CUDA runtime, cuDNN, cuBLAS, the driver's libcuda,
// TensorFlow; the GPU device files it holds open or maps: /dev/nvidiaN,
// /dev/dxg; its environment; exe, cmdline and cwd; its children:
// DataLoader workers, torchrun ranks; its run-queue waits and cgroup CPU
// limit), and from the doctor: the frameworks and builds of the
// interpreter the process runs, and the machine's own findings when there
// is no usable GPU.
//
// Where NVML cannot name the process (a container, whose PIDs are not the
// host's; WSL 2 and Windows' WDDM, which give no per-process data; MIG
// without the right to list processes) the device files and the GPU's own
// memory and utilisation stand in, and the report says what could and
// could not be seen.
//
// The package is headless. Processes are read through a source: /proc
// under a root path (or an fs.FS; fake trees in tests, on every platform)
// or the Windows API; NVML through nvml.Library (nvmlfake in tests).
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/probe"

	"gpuwizard/gpu/nvml"
)

// Options say which machine to watch and how. The zero value watches the
// live machine.
type Options struct {
	// Root is the machine's "/" (a fake machine in tests). "": the live
	// machine ("/" on Linux; the Windows process API on Windows).
	Root string
	// FS reads the files under Root (/proc, /etc/passwd, /sys). Nil:
	// os.DirFS(Root). Tests wrap it to deny reads, as the kernel does for
	// another user's process.
	FS fs.FS
	// NVML is the management library. Nil: the real one.
	NVML nvml.Library
	// Machine returns the doctor's facts about the machine, probed with
	// the watched process's environment (nil when it cannot be read).
	// Nil: probe.Probe over Root and NVML.
	Machine func(ctx context.Context, environ map[string]string) *gpu.Facts
	// Matrix is the doctor's compatibility matrix. Nil: the embedded one.
	Matrix *compat.Matrix
	// Window is the span CPU use and GPU utilisation are averaged over.
	// Zero: 10 s.
	Window time.Duration
	// SetupGrace is how long after its start a process with no GPU
	// context is "setting up" (importing its framework, building its
	// dataset, downloading weights) rather than judged. Zero: 60 s.
	SetupGrace time.Duration
	// ClockTicks is the kernel's USER_HZ, the unit of CPU times in
	// /proc/PID/stat. Zero: 100 (every Linux architecture gpuwizard runs on).
	ClockTicks int
	// Now reads the clock. Nil: time.Now.
	Now func() time.Time

	// selfUID is the user id the watch runs as on a /proc source. Nil:
	// os.Getuid() (tests play another user).
	selfUID *int
}

func (o *Options) fill() {
	if o.Window <= 0 {
		o.Window = 10 * time.Second
	}
	if o.SetupGrace <= 0 {
		o.SetupGrace = 60 * time.Second
	}
	if o.ClockTicks <= 0 {
		o.ClockTicks = 100
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// procFS is the /proc reader of Options: FS, or the folder Root.
func (o *Options) procFS() *procFS {
	fsys := o.FS
	if fsys == nil {
		root := o.Root
		if root == "" {
			root = "/"
		}
		fsys = os.DirFS(root)
	}
	p := newProcFS(fsys, o.ClockTicks)
	p.self = os.Getuid()
	if o.selfUID != nil {
		p.self = *o.selfUID
	}
	return p
}

// machine probes the machine the way the doctor does.
func (o *Options) machine(ctx context.Context, environ map[string]string) *gpu.Facts {
	if o.Machine != nil {
		return o.Machine(ctx, environ)
	}
	return probe.Probe(ctx, probe.Options{Root: o.Root, Environ: environ, NVML: o.NVML, Home: environ["HOME"], Cwd: environ["PWD"]})
}

// member is one process of the watched tree at one reading.
type member struct {
	proc
	Role    string   // "main", "worker", "rank 1", "child", ...
	CPUPct  float64  // since the previous reading; 100 is one core
	CPUOK   bool     // there was a previous reading
	WaitPct float64  // share of the time since the previous reading it waited for a CPU (%)
	WaitOK  bool     // measured
	Devices []string // GPU device files it holds open
	DevErr  error    // reading its open files failed
}

// reading is one look at the process tree and the GPUs.
type reading struct {
	at        time.Time
	members   []member // the watched process first
	cpuPct    float64  // the whole tree, since the previous reading
	mainPct   float64
	cpuOK     bool
	limit     cpuLimit // the tree's cgroup CPU limit (Cores 0: none)
	throttled float64  // share of the cgroup's periods throttled since the previous reading (%)
	thrOK     bool
	nvml      string // a gpu.NVML* status
	nvmlErr   string
	devs      []device
}

// listed returns the tree's processes NVML lists on each GPU: device
// index → PID → MiB.
func (r reading) listed() map[int]map[int]uint64 {
	out := map[int]map[int]uint64{}
	for _, d := range r.devs {
		for _, m := range r.members {
			if mib, ok := d.Procs[m.PID]; ok {
				if out[d.Index] == nil {
					out[d.Index] = map[int]uint64{}
				}
				out[d.Index][m.PID] = mib
			}
		}
	}
	return out
}

// childInfo is what is read once about a child process.
type childInfo struct {
	start   uint64
	environ map[string]string
	files   []string // mapped files; nil for a forked copy of its parent
	forked  bool
	mapsAt  time.Time
}

// prevCPU is a process's counters at the previous reading.
type prevCPU struct {
	cpu, wait time.Duration
	waitOK    bool
	start     uint64
}

// Watcher watches one process and its children. Sample takes a reading;
// Report judges the readings so far. A Watcher is safe for one goroutine
// at a time; Close releases NVML.
type Watcher struct {
	o       Options
	pid     int // the process watched: asked, or the training's main process it leads to
	asked   int // the PID asked for
	led     []string
	src     source
	srcErr  error
	gpus    *gpuReader
	ownGPUs bool

	started   time.Time
	first     *proc // the watched process at the first reading
	prev      map[int]prevCPU
	prevAt    time.Time
	prevLimit cpuLimit
	hist      []reading
	last      reading
	ended     bool
	endedAt   time.Time
	exit      *int     // the exit status, when the caller knows it (a started command)
	command   []string // the command line the caller started, when it did

	id          identity // the training process's identity, re-read when it execs
	mainPID     int      // the watched process whose maps mainFiles are
	mainFiles   []string
	mainErr     error
	mapsAt      time.Time // when the maps were read
	devAt       time.Time // when the open device files were read
	devCache    map[int][]string
	children    map[int]*childInfo
	interp      *gpu.PythonEnv
	interpTried bool
	interpKey   string
	facts       *gpu.Facts
	factsEnv    map[string]string
	diag        *gpu.Report
	matrix      *compat.Matrix
	matrixErr   error
	numCPU      int
	everLoaded  map[string]Lib // every library of interest seen, by kind
	sum         summaryAcc
	mu          sync.Mutex
}

// New watches pid. It reads nothing yet: the first Sample does.
func New(opts Options, pid int) *Watcher {
	opts.fill()
	src, err := nativeSource(&opts)
	return &Watcher{o: opts, pid: pid, asked: pid, src: src, srcErr: err, gpus: newGPUReader(opts.NVML), ownGPUs: true,
		prev: map[int]prevCPU{}, children: map[int]*childInfo{}, everLoaded: map[string]Lib{}}
}

// PID is the process watched: the one asked for, or the training's main
// process the first Sample led to (from a DataLoader worker or a rank).
func (w *Watcher) PID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid
}

// Close releases NVML if the watcher started it.
func (w *Watcher) Close() {
	if w.ownGPUs {
		w.gpus.close()
	}
}

// SetExitStatus records the exit status of a watched process the caller
// started and waited for; the summary reports it.
func (w *Watcher) SetExitStatus(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exit = &code
}

// SetCommand records the command line of a process the caller started:
// its name stays known when the process ends before it could be read.
func (w *Watcher) SetCommand(argv []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.command = slices.Clone(argv)
}

// Ended reports whether the watched process has ended.
func (w *Watcher) Ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// Sample takes one reading: the process tree's CPU use, its libraries,
// device files and children, and NVML's GPUs. It returns an error wrapping
// ErrNoProcess when the process does not exist at the first reading; a
// process that ends later is not an error: Ended turns true and Report
// says so.
func (w *Watcher) Sample(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srcErr != nil {
		return w.srcErr
	}
	now := w.o.Now()
	if w.started.IsZero() {
		w.started = now
	}
	if w.ended {
		return nil
	}
	main, err := w.src.proc(w.pid)
	if err == nil && w.first != nil && main.StartTime != w.first.StartTime {
		err = fmt.Errorf("process %d: %w (the PID now belongs to another process)", w.pid, ErrNoProcess)
	}
	if err != nil || main.zombie() {
		if w.first == nil {
			if err == nil {
				err = fmt.Errorf("process %d has already ended: %w", w.pid, ErrNoProcess)
			}
			return err
		}
		w.ended, w.endedAt = true, now
		return nil
	}
	if w.first == nil {
		main = w.lead(main)
		m := main
		w.first = &m
		w.numCPU = w.src.numCPU()
	}
	r := reading{at: now}
	r.members = w.members(main, now)
	w.identify(r.members, now)
	w.cpu(&r)
	w.devices(&r, now)
	r.nvml, r.nvmlErr, r.devs = w.gpus.read()
	w.record(r)
	return nil
}

// members reads the watched process's tree: the process, then its
// descendants breadth first.
func (w *Watcher) members(main proc, now time.Time) []member {
	out := []member{{proc: main, Role: "main"}}
	kids, table := treeOf(w.src, w.pid)
	for _, pid := range kids {
		pr, err := w.src.proc(pid)
		if err != nil || pr.zombie() {
			continue
		}
		out = append(out, member{proc: pr, Role: w.role(pr, table, now)})
	}
	return out
}

// role names a child: a forked copy of its parent (a DataLoader worker), a
// torchrun rank, a spawned multiprocessing worker, or another child.
func (w *Watcher) role(pr proc, table map[int]proc, now time.Time) string {
	ci := w.children[pr.PID]
	if ci == nil || ci.start != pr.StartTime {
		ci = &childInfo{start: pr.StartTime, mapsAt: now}
		w.children[pr.PID] = ci
		var parentCmd []string
		if pp, err := w.src.proc(pr.PPID); err == nil {
			parentCmd = pp.Cmdline
		}
		ci.forked = len(pr.Cmdline) > 0 && slices.Equal(pr.Cmdline, parentCmd)
		ci.environ, _ = w.src.environ(pr.PID)
		if !ci.forked {
			ci.files, _ = w.src.modules(pr.PID)
		}
	} else if !ci.forked && w.due(ci.mapsAt, now) {
		ci.mapsAt = now
		if files, err := w.src.modules(pr.PID); err == nil && len(files) > 0 {
			ci.files = files
		}
	}
	if r := ci.environ["RANK"]; r != "" {
		return "rank " + r
	}
	if r := ci.environ["LOCAL_RANK"]; r != "" {
		return "rank " + r
	}
	switch workerKind(pr.Cmdline) {
	case "resource tracker":
		return "resource tracker"
	case "":
		if ci.forked {
			return "worker"
		}
		return "child"
	}
	return "worker"
}

// cpu fills the reading's CPU use and run-queue waits from the counters
// since the previous one, and the tree's cgroup limit.
func (w *Watcher) cpu(r *reading) {
	elapsed := r.at.Sub(w.prevAt)
	next := map[int]prevCPU{}
	sched, _ := w.src.(schedReader)
	for i := range r.members {
		m := &r.members[i]
		cur := prevCPU{cpu: m.CPU, start: m.StartTime}
		if sched != nil {
			cur.wait, cur.waitOK = sched.runWait(m.PID)
		}
		next[m.PID] = cur
		prev, ok := w.prev[m.PID]
		if !ok || prev.start != m.StartTime || w.prevAt.IsZero() || elapsed <= 0 || m.CPU < prev.cpu {
			continue
		}
		m.CPUPct = float64(m.CPU-prev.cpu) / float64(elapsed) * 100
		m.CPUOK = true
		if cur.waitOK && prev.waitOK && cur.wait >= prev.wait {
			m.WaitPct, m.WaitOK = float64(cur.wait-prev.wait)/float64(elapsed)*100, true
		}
		r.cpuPct += m.CPUPct
		r.cpuOK = true
		if i == 0 {
			r.mainPct = m.CPUPct
		}
	}
	if sched != nil {
		if l, ok := sched.cpuLimit(w.pid); ok {
			r.limit = l
			if p := w.prevLimit; p.Path == l.Path && l.Periods > p.Periods && l.Throttled >= p.Throttled {
				r.throttled = float64(l.Throttled-p.Throttled) / float64(l.Periods-p.Periods) * 100
				r.thrOK = true
			}
			w.prevLimit = l
		}
	}
	w.prev, w.prevAt = next, r.at
}

// devices reads the GPU device files each process of the tree holds open
// (a new process at once, the others as often as the maps).
func (w *Watcher) devices(r *reading, now time.Time) {
	dr, ok := w.src.(deviceReader)
	if !ok {
		return
	}
	fresh := w.due(w.devAt, now)
	if fresh {
		w.devAt = now
	}
	next := map[int][]string{}
	for i := range r.members {
		m := &r.members[i]
		if devs, seen := w.devCache[m.PID]; seen && !fresh {
			m.Devices = devs
		} else {
			m.Devices, m.DevErr = dr.openDevices(m.PID)
		}
		next[m.PID] = m.Devices
	}
	w.devCache = next
}

// record keeps the reading in the window and in the summary.
func (w *Watcher) record(r reading) {
	w.last = r
	w.hist = append(w.hist, r)
	cut := r.at.Add(-w.o.Window)
	i := 0
	for i < len(w.hist)-1 && w.hist[i].at.Before(cut) {
		i++
	}
	w.hist = w.hist[i:]
	for _, l := range w.libs() {
		if _, ok := w.everLoaded[l.Kind]; !ok {
			w.everLoaded[l.Kind] = l
		}
	}
	w.sum.add(r)
}

// isPermission reports whether err is the system refusing to show another
// user's process.
func isPermission(err error) bool {
	return err != nil && errors.Is(err, fs.ErrPermission)
}
