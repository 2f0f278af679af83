// Package watch looks at a running training and says where it really runs:
// on which GPU and how busy, or on the CPU and why, in the doctor's
// vocabulary (gpu.Finding with its causes).
//
// The evidence comes from NVML (is the process or one of its children
// among a GPU's compute processes, with how much memory, and how busy is
// that GPU over time), from /proc (CPU use and threads; the libraries the
// process has loaded: libtorch_cuda.so or only libtorch_cpu.so, the CUDA
// runtime, cuDNN, cuBLAS, the driver's libcuda, TensorFlow; its
// environment: CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH; exe, cmdline and
// cwd; its children: DataLoader workers, torchrun ranks), and from the
// doctor: the frameworks and builds of the interpreter the process runs,
// and the machine's own findings when there is no usable GPU.
//
// The package is headless. /proc is read through a root path (or an
// fs.FS), NVML through nvml.Library: tests pass fake /proc trees and
// nvmlfake.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/probe"

	"gpuwizard/gpu/nvml"
)

// Options say which machine to watch and how. The zero value watches the
// live machine.
type Options struct {
	// Root is the machine's "/" (a fake machine in tests). "": "/".
	Root string
	// FS reads the files under Root (/proc, /etc/passwd). Nil:
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
	// ClockTicks is the kernel's USER_HZ, the unit of CPU times in
	// /proc/PID/stat. Zero: 100 (every Linux architecture gpuwizard runs on).
	ClockTicks int
	// Now reads the clock. Nil: time.Now.
	Now func() time.Time
}

func (o *Options) fill() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.FS == nil {
		o.FS = os.DirFS(o.Root)
	}
	if o.Window <= 0 {
		o.Window = 10 * time.Second
	}
	if o.ClockTicks <= 0 {
		o.ClockTicks = 100
	}
	if o.Now == nil {
		o.Now = time.Now
	}
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
	Role   string  // "main", "worker", "rank 1", "child", ...
	CPUPct float64 // since the previous reading; 100 is one core
	CPUOK  bool    // there was a previous reading
}

// reading is one look at the process tree and the GPUs.
type reading struct {
	at      time.Time
	members []member // the watched process first
	cpuPct  float64  // the whole tree, since the previous reading
	mainPct float64
	cpuOK   bool
	nvml    string // a gpu.NVML* status
	nvmlErr string
	devs    []device
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
}

// Watcher watches one process and its children. Sample takes a reading;
// Report judges the readings so far. A Watcher is safe for one goroutine
// at a time; Close releases NVML.
type Watcher struct {
	o       Options
	pid     int
	fs      procFS
	gpus    *gpuReader
	ownGPUs bool

	started   time.Time
	first     *proc // the watched process at the first reading
	prevTicks map[int][2]uint64
	prevAt    time.Time
	hist      []reading
	last      reading
	ended     bool
	endedAt   time.Time
	exit      *int // the exit status, when the caller knows it (a started command)

	// read once, or now and then
	exe, cwd    string
	exeErr      error
	environ     map[string]string
	environErr  error
	files       []string // the watched process's mapped files
	mapsErr     error
	children    map[int]*childInfo
	interp      *gpu.PythonEnv
	interpTried bool
	interpSite  string
	facts       *gpu.Facts
	diag        *gpu.Report
	matrix      *compat.Matrix
	matrixErr   error
	numCPU      int
	everLoaded  map[string]Lib // every library of interest seen, by kind
	sum         summaryAcc
	lastReport  *Report
	mu          sync.Mutex
}

// New watches pid. It reads nothing yet: the first Sample does.
func New(opts Options, pid int) *Watcher {
	opts.fill()
	return &Watcher{o: opts, pid: pid, fs: procFS{opts.FS}, gpus: newGPUReader(opts.NVML), ownGPUs: true,
		prevTicks: map[int][2]uint64{}, children: map[int]*childInfo{}, everLoaded: map[string]Lib{}}
}

// PID is the watched process.
func (w *Watcher) PID() int { return w.pid }

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

// Ended reports whether the watched process has ended.
func (w *Watcher) Ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// Sample takes one reading: the process tree's CPU use, its libraries and
// children, and NVML's GPUs. It returns an error wrapping ErrNoProcess
// when the process does not exist at the first reading; a process that
// ends later is not an error: Ended turns true and Report says so.
func (w *Watcher) Sample(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.o.Now()
	if w.started.IsZero() {
		w.started = now
	}
	if w.ended {
		return nil
	}
	main, err := w.fs.stat(w.pid)
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
		m := main
		w.first = &m
		w.readOnce()
	}
	r := reading{at: now}
	r.members = append(r.members, member{proc: main, Role: "main"})
	if table, err := w.fs.table(); err == nil {
		for _, pid := range descendants(table, w.pid) {
			pr, err := w.fs.stat(pid)
			if err != nil || pr.zombie() {
				continue
			}
			r.members = append(r.members, member{proc: pr, Role: w.role(pr, table)})
		}
	}
	w.cpu(&r)
	if files, err := w.fs.mappedFiles(w.pid); err == nil {
		w.files, w.mapsErr = files, nil
	} else if w.files == nil {
		w.mapsErr = err
	}
	r.nvml, r.nvmlErr, r.devs = w.gpus.read()
	w.record(r)
	return nil
}

// readOnce reads what does not change while a process runs.
func (w *Watcher) readOnce() {
	w.exe, w.exeErr = w.fs.readLink(procPath(w.pid, "exe"))
	w.cwd, _ = w.fs.readLink(procPath(w.pid, "cwd"))
	w.environ, w.environErr = w.fs.environ(w.pid)
	w.numCPU = w.fs.numCPU()
}

// role names a child: a forked copy of its parent (a DataLoader worker), a
// torchrun rank, a spawned multiprocessing worker, or another child.
func (w *Watcher) role(pr proc, table map[int]proc) string {
	ci := w.children[pr.PID]
	if ci == nil || ci.start != pr.StartTime {
		ci = &childInfo{start: pr.StartTime}
		w.children[pr.PID] = ci
		parent, ok := table[pr.PPID]
		var parentCmd []string
		if ok {
			if pp, err := w.fs.stat(parent.PID); err == nil {
				parentCmd = pp.Cmdline
			}
		}
		ci.forked = len(pr.Cmdline) > 0 && strings.Join(pr.Cmdline, "\x00") == strings.Join(parentCmd, "\x00")
		ci.environ, _ = w.fs.environ(pr.PID)
		if !ci.forked {
			ci.files, _ = w.fs.mappedFiles(pr.PID)
		}
	} else if !ci.forked {
		if files, err := w.fs.mappedFiles(pr.PID); err == nil {
			ci.files = files
		}
	}
	cmd := strings.Join(pr.Cmdline, " ")
	switch {
	case ci.environ["RANK"] != "" || ci.environ["LOCAL_RANK"] != "":
		r := ci.environ["RANK"]
		if r == "" {
			r = ci.environ["LOCAL_RANK"]
		}
		return "rank " + r
	case ci.forked:
		return "worker"
	case strings.Contains(cmd, "multiprocessing.resource_tracker"):
		return "resource tracker"
	case strings.Contains(cmd, "multiprocessing.spawn") || strings.Contains(cmd, "multiprocessing.forkserver"):
		return "worker"
	}
	return "child"
}

// cpu fills the reading's CPU use from the ticks since the previous one.
func (w *Watcher) cpu(r *reading) {
	elapsed := r.at.Sub(w.prevAt).Seconds()
	next := map[int][2]uint64{}
	hz := float64(w.o.ClockTicks)
	for i := range r.members {
		m := &r.members[i]
		next[m.PID] = [2]uint64{m.Ticks, m.StartTime}
		prev, ok := w.prevTicks[m.PID]
		if !ok || prev[1] != m.StartTime || w.prevAt.IsZero() || elapsed <= 0 || m.Ticks < prev[0] {
			continue
		}
		m.CPUPct = float64(m.Ticks-prev[0]) / hz / elapsed * 100
		m.CPUOK = true
		r.cpuPct += m.CPUPct
		r.cpuOK = true
		if i == 0 {
			r.mainPct = m.CPUPct
		}
	}
	w.prevTicks, w.prevAt = next, r.at
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

// libs lists the libraries of interest the tree has loaded: the watched
// process's first, then its children's that it lacks.
func (w *Watcher) libs() libSet {
	var out libSet
	seen := map[string]bool{}
	add := func(pid int, files []string) {
		for _, f := range files {
			if k := libKind(f); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, Lib{Kind: k, Path: f, PID: pid})
			}
		}
	}
	add(w.pid, w.files)
	pids := make([]int, 0, len(w.children))
	for pid := range w.children {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	alive := map[int]bool{}
	for _, m := range w.last.members {
		alive[m.PID] = true
	}
	for _, pid := range pids {
		if alive[pid] {
			add(pid, w.children[pid].files)
		}
	}
	return out
}

// allFiles is every mapped file of the tree (for finding site-packages).
func (w *Watcher) allFiles() []string {
	files := append([]string(nil), w.files...)
	for _, ci := range w.children {
		files = append(files, ci.files...)
	}
	return files
}

// interpreter finds the Python the process runs, as the doctor reads it:
// the candidate whose site-packages holds the framework it loaded.
func (w *Watcher) interpreter() *gpu.PythonEnv {
	site := ""
	for _, pkg := range []string{"torch", "tensorflow", "jaxlib", "ultralytics"} {
		if site = frameworkSite(w.allFiles(), pkg); site != "" {
			break
		}
	}
	if w.interpTried && site == w.interpSite {
		return w.interp
	}
	w.interpTried, w.interpSite = true, site
	cands := w.interpreterCandidates()
	opts := probe.Options{Root: w.o.Root, Environ: w.environ, Home: w.environ["HOME"], Cwd: w.cwd}
	if opts.Environ == nil {
		opts.Environ = map[string]string{}
	}
	var firstEnv *gpu.PythonEnv
	for _, c := range cands {
		env, ok := probe.Interpreter(opts, c)
		if !ok {
			continue
		}
		if site == "" || gpu.Contains(env.SitePackages, site) {
			w.interp = &env
			return w.interp
		}
		if firstEnv == nil {
			firstEnv = &env
		}
	}
	w.interp = firstEnv
	return w.interp
}

// interpreterCandidates lists the paths that may be the process's Python:
// argv[0] as it was started (a venv's bin/python keeps the venv, which the
// resolved exe loses), the environment's venv or conda prefix, and exe.
func (w *Watcher) interpreterCandidates() []string {
	var out []string
	add := func(p string) {
		if p != "" && !gpu.Contains(out, p) {
			out = append(out, p)
		}
	}
	if w.first != nil && len(w.first.Cmdline) > 0 {
		a0 := w.first.Cmdline[0]
		switch {
		case filepath.IsAbs(a0):
			add(a0)
		case strings.Contains(a0, "/") && w.cwd != "":
			add(filepath.Join(w.cwd, a0))
		case strings.HasPrefix(a0, "python"):
			for _, dir := range filepath.SplitList(w.environ["PATH"]) {
				if filepath.IsAbs(dir) {
					if st, err := fs.Stat(w.o.FS, strings.TrimPrefix(filepath.Join(dir, a0), "/")); err == nil && !st.IsDir() {
						add(filepath.Join(dir, a0))
						break
					}
				}
			}
		}
	}
	if v := w.environ["VIRTUAL_ENV"]; v != "" {
		add(v + "/bin/python")
	}
	if v := w.environ["CONDA_PREFIX"]; v != "" {
		add(v + "/bin/python")
	}
	if strings.Contains(filepath.Base(w.exe), "python") {
		add(w.exe)
	}
	return out
}

// doctor returns the machine's facts and the doctor's report on them, with
// the process's interpreter as the only Python: probed once.
func (w *Watcher) doctor(ctx context.Context) (*gpu.Facts, *gpu.Report) {
	if w.facts == nil {
		w.facts = w.o.machine(ctx, w.environ)
	}
	if w.matrix == nil && w.matrixErr == nil {
		if w.o.Matrix != nil {
			w.matrix = w.o.Matrix
		} else {
			w.matrix, w.matrixErr = compat.LoadMatrix()
		}
	}
	if w.matrix == nil {
		return w.facts, nil
	}
	env := w.interpreter()
	if w.diag == nil || (env != nil && (len(w.diag.Facts.Pythons) == 0 || w.diag.Facts.Pythons[0].Interpreter != env.Interpreter)) {
		f := *w.facts
		f.Pythons = nil
		if env != nil {
			f.Pythons = []gpu.PythonEnv{*env}
		}
		rep := doctor.Diagnose(&f, w.matrix)
		w.diag = &rep
	}
	return w.facts, w.diag
}

// isPermission reports whether err is the kernel refusing to show another
// user's process.
func isPermission(err error) bool {
	return err != nil && errors.Is(err, fs.ErrPermission)
}
