package watch

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// Candidate is a process that looks like training: a Python with torch,
// TensorFlow or JAX loaded, Ultralytics' yolo, or gpuwizard train. Its children (DataLoader
// workers, torchrun ranks) are counted in.
type Candidate struct {
	PID        int      `json:"pid"`
	Command    string   `json:"command"`
	Frameworks []string `json:"frameworks"` // "torch (CUDA)", "torch (CPU-only)", "tensorflow", "yolo", "gpuwizard (CUDA)"
	Children   int      `json:"children"`
	Threads    int      `json:"threads"`
	CPUPct     float64  `json:"cpu_pct"` // the tree, since the previous List; -1 on the first
	GPUs       []int    `json:"gpus,omitempty"`
	GPUMiB     uint64   `json:"gpu_mib,omitempty"`
	OnGPU      bool     `json:"on_gpu"`
}

// Lister finds the user's running trainings. Each List reads /proc and
// NVML once; CPU use is measured between two calls. It is safe for
// concurrent use.
type Lister struct {
	mu    sync.Mutex
	o     Options
	src   source
	err   error
	gpus  *gpuReader
	uid   int
	self  int
	prev  map[int]prevCPU // PID → CPU time, start time
	prevT time.Time
	libs  map[int]listLibs // PID → what its maps showed, refreshed now and then
}

type listLibs struct {
	start uint64
	at    time.Time
	kinds map[string]bool
}

// NewLister lists the processes of user uid (-1: every user's) on the
// machine opts names, leaving out this program's own process.
func NewLister(opts Options, uid int) *Lister {
	opts.fill()
	src, err := nativeSource(&opts)
	return &Lister{o: opts, src: src, err: err, gpus: newGPUReader(opts.NVML), uid: uid, self: os.Getpid(),
		prev: map[int]prevCPU{}, libs: map[int]listLibs{}}
}

// Close releases NVML.
func (l *Lister) Close() { l.gpus.close() }

// mapsRefresh is how often a process's libraries are read again: imports
// happen in the first seconds of a run.
const mapsRefresh = 5 * time.Second

// List returns the trainings running now, the busiest first.
func (l *Lister) List(ctx context.Context) ([]Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	now := l.o.Now()
	table, err := l.src.table()
	if err != nil {
		return nil, err
	}
	_, _, devs := l.gpus.read()
	cpu := l.cpuSince(now, table)
	cands, err := l.candidates(ctx, now, table)
	if err != nil {
		return nil, err
	}
	// A candidate whose parent is one too (a worker, a rank) is counted
	// in its parent's tree.
	isCand := map[int]bool{}
	for _, c := range cands {
		isCand[c.PID] = true
	}
	var roots []Candidate
	for _, c := range cands {
		if !isCand[table[c.PID].PPID] {
			roots = append(roots, c)
		}
	}
	for i := range roots {
		sumTree(&roots[i], table, cpu, devs)
	}
	sort.SliceStable(roots, func(i, j int) bool {
		if roots[i].OnGPU != roots[j].OnGPU {
			return roots[i].OnGPU
		}
		return roots[i].CPUPct > roots[j].CPUPct
	})
	// Forget the libraries of processes that ended.
	for pid := range l.libs {
		if _, ok := table[pid]; !ok {
			delete(l.libs, pid)
		}
	}
	return roots, nil
}

// cpuSince is each process's CPU use since the previous List (100 is one
// core; -1 when it was not seen then).
func (l *Lister) cpuSince(now time.Time, table map[int]proc) map[int]float64 {
	elapsed := now.Sub(l.prevT)
	next := map[int]prevCPU{}
	cpu := map[int]float64{}
	for pid, pr := range table {
		next[pid] = prevCPU{cpu: pr.CPU, start: pr.StartTime}
		if p, ok := l.prev[pid]; ok && p.start == pr.StartTime && elapsed > 0 && pr.CPU >= p.cpu && !l.prevT.IsZero() {
			cpu[pid] = float64(pr.CPU-p.cpu) / float64(elapsed) * 100
		} else {
			cpu[pid] = -1
		}
	}
	l.prev, l.prevT = next, now
	return cpu
}

// candidates are the user's processes that look like training.
func (l *Lister) candidates(ctx context.Context, now time.Time, table map[int]proc) ([]Candidate, error) {
	var cands []Candidate
	for _, pid := range sortedPIDs(table) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("watch: %w", ctx.Err())
		}
		if pid == l.self || table[pid].zombie() {
			continue
		}
		full, err := l.src.proc(pid)
		if err != nil || len(full.Cmdline) == 0 || (l.uid >= 0 && full.UID != l.uid) {
			continue
		}
		if fws := l.frameworks(now, full); len(fws) > 0 {
			cands = append(cands, Candidate{PID: pid, Command: shortCommand(full.Cmdline, full.Comm), Frameworks: fws})
		}
	}
	return cands, nil
}

// sumTree adds a candidate's tree up: children, threads, CPU, GPUs.
func sumTree(c *Candidate, table map[int]proc, cpu map[int]float64, devs []device) {
	tree := append([]int{c.PID}, descendants(table, c.PID)...)
	c.Children = len(tree) - 1
	c.CPUPct = 0
	for _, pid := range tree {
		c.Threads += table[pid].Threads
		if cpu[pid] < 0 && pid == c.PID {
			c.CPUPct = -1
		}
		if c.CPUPct >= 0 && cpu[pid] > 0 {
			c.CPUPct += cpu[pid]
		}
	}
	c.CPUPct = round1(c.CPUPct)
	for _, d := range devs {
		on := false
		for _, pid := range tree {
			if mib, ok := d.Procs[pid]; ok {
				c.GPUMiB += mib
				on = true
			}
		}
		if on {
			c.GPUs = append(c.GPUs, d.Index)
			c.OnGPU = true
		}
	}
}

func sortedPIDs(t map[int]proc) []int {
	out := make([]int, 0, len(t))
	for pid := range t {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// frameworks says what makes a process look like training: the
// frameworks it has loaded, or Ultralytics' yolo command.
func (l *Lister) frameworks(now time.Time, pr proc) []string {
	yolo := pr.Comm == "yolo" || programBase(pr.Cmdline[0]) == "yolo" || (len(pr.Cmdline) > 1 && programBase(pr.Cmdline[1]) == "yolo")
	own := gpuwizardTrain(pr)
	if !pythonLike(pr) && !own {
		return nil
	}
	ll, ok := l.libs[pr.PID]
	if !ok || ll.start != pr.StartTime || (now.Sub(ll.at) >= mapsRefresh && !ll.kinds[LibTorchCPU] && !ll.kinds[LibTensorFlow]) {
		ll = listLibs{start: pr.StartTime, at: now, kinds: map[string]bool{}}
		if files, err := l.src.modules(pr.PID); err == nil {
			for _, f := range files {
				if k := libKind(f); k != "" {
					ll.kinds[k] = true
				}
			}
		}
		l.libs[pr.PID] = ll
	}
	var out []string
	switch {
	case ll.kinds[LibTorchCUDA]:
		out = append(out, "torch (CUDA)")
	case ll.kinds[LibTorchHIP]:
		out = append(out, "torch (ROCm)")
	case ll.kinds[LibTorchCPU]:
		out = append(out, "torch (CPU-only)")
	}
	if ll.kinds[LibTensorFlow] {
		out = append(out, "tensorflow")
	}
	if ll.kinds[LibJAX] {
		out = append(out, "jax")
	}
	if yolo {
		out = append(out, "yolo")
	}
	if own {
		if ll.kinds[LibCUDA] {
			out = append(out, "gpuwizard (CUDA)")
		} else {
			out = append(out, "gpuwizard")
		}
	}
	return out
}
