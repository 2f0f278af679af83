package watch

import (
	"errors"
	"sort"
	"strconv"
	"time"
)

// ErrNoProcess is returned (wrapped) when a PID names no process.
var ErrNoProcess = errors.New("watch: no such process")

// proc is what the system says about one process at one moment.
type proc struct {
	PID       int
	PPID      int
	Comm      string // the short name (Linux: 15 characters at most; Windows: the image name)
	State     byte   // Linux: R, S, D, Z, T, ...; 0 unknown
	CPU       time.Duration
	Threads   int
	StartTime uint64    // an opaque start stamp: tells a reused PID apart
	Started   time.Time // when it started; zero when unknown
	UID       int       // real user id; -1 unknown (always on Windows)
	CPUs      int       // CPUs it may run on (its affinity); 0 unknown
	Cmdline   []string
	NSpid     []int // Linux: its PID in each PID namespace, the reader's first
}

// zombie reports whether the process has ended and waits to be reaped.
func (p proc) zombie() bool { return p.State == 'Z' || p.State == 'X' }

// source is a machine's processes as the watcher reads them: Linux's /proc
// (the live one, or a fake root in tests, on every platform: procFS), or
// the Win32 process API (winSource). What a source cannot read it answers
// with an error wrapping errors.ErrUnsupported.
type source interface {
	// table reads every process briefly: PID, PPID, Comm, State, CPU,
	// Threads, StartTime.
	table() (map[int]proc, error)
	// proc reads one process fully; an error wrapping ErrNoProcess when it
	// does not exist.
	proc(pid int) (proc, error)
	// environ is the environment the process was started with.
	environ(pid int) (map[string]string, error)
	// modules lists the files mapped into the process: its loaded
	// libraries (Linux: /proc/PID/maps, GPU device mappings included;
	// Windows: its DLLs).
	modules(pid int) ([]string, error)
	// exe is the program file the process runs.
	exe(pid int) (string, error)
	// userName names the process's owner.
	userName(p proc) string
	// numCPU counts the machine's CPUs; 0 unknown.
	numCPU() int
	// isFile reports whether path (a path on the watched machine) is a
	// regular file.
	isFile(path string) bool
}

// childLister is a source that lists a process's children without
// reading every process (Linux: /proc/PID/task/TID/children).
type childLister interface {
	children(pid int) ([]int, bool)
}

// ownerReader is a source that tells whether a process belongs to the user
// running the watch (Linux: its real user id; Windows: its token's user).
type ownerReader interface {
	ownedBySelf(p proc) bool
}

// cwdReader is a source that reads a process's working folder.
type cwdReader interface {
	cwd(pid int) (string, error)
}

// deviceReader is a source that lists the GPU device files a process holds
// open (Linux: /dev/nvidia*, /dev/dxg among /proc/PID/fd).
type deviceReader interface {
	openDevices(pid int) ([]string, error)
}

// schedReader is a source that reads CPU contention: how long a process
// waited for a CPU, and its cgroup's CPU limit and throttling.
type schedReader interface {
	runWait(pid int) (time.Duration, bool)
	cpuLimit(pid int) (cpuLimit, bool)
}

// gpuNodeReader is a source that maps GPUs (PCI bus ids) to the minor
// numbers of their device files (/dev/nvidiaN).
type gpuNodeReader interface {
	gpuMinors() map[string]int
}

// cpuLimit is a cgroup's CPU quota and how often it throttled.
type cpuLimit struct {
	Cores     float64 // quota/period; 0: no limit
	Path      string  // the cgroup whose limit it is
	Periods   uint64  // enforcement periods so far
	Throttled uint64  // periods in which it was throttled
}

// maxTree bounds the processes followed under one watched process.
const maxTree = 256

// descendants lists pid's children, grandchildren and so on, breadth
// first, from a process table. A process that started before the one its
// parent PID names is not its child: the parent ended and its PID was
// reused (Windows keeps a dead parent's PID in its children).
func descendants(t map[int]proc, pid int) []int {
	kids := map[int][]int{}
	for _, pr := range t {
		if parent, ok := t[pr.PPID]; ok && parent.StartTime > 0 && pr.StartTime > 0 && pr.StartTime < parent.StartTime {
			continue
		}
		kids[pr.PPID] = append(kids[pr.PPID], pr.PID)
	}
	return walkTree(pid, func(p int) ([]int, bool) { return kids[p], true })
}

// walkTree lists pid's descendants breadth first, children(p) giving each
// process's children; it stops (ok false) when children cannot tell.
func walkTree(pid int, children func(int) ([]int, bool)) []int {
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 && len(out) < maxTree {
		cur := queue[0]
		queue = queue[1:]
		ks, ok := children(cur)
		if !ok {
			return nil
		}
		ks = append([]int(nil), ks...)
		sort.Ints(ks)
		for _, k := range ks {
			if !seen[k] && len(out) < maxTree {
				seen[k] = true
				out = append(out, k)
				queue = append(queue, k)
			}
		}
	}
	return out
}

// treeOf lists pid's descendants: through the source's children lists when
// it has them (a few small reads), else from the whole process table.
func treeOf(src source, pid int) ([]int, map[int]proc) {
	if cl, ok := src.(childLister); ok {
		complete := true
		kids := walkTree(pid, func(p int) ([]int, bool) {
			ks, ok := cl.children(p)
			complete = complete && ok
			return ks, ok
		})
		if complete {
			return kids, nil
		}
	}
	t, err := src.table()
	if err != nil {
		return nil, nil
	}
	return descendants(t, pid), t
}

// placeNamer is a source that names where it read a fact ("the DLLs of
// process 4242") rather than /proc's files.
type placeNamer interface {
	place(pid int, what string) string
}

// place names where src reads what ("maps", "environ", "cmdline", "fd",
// "exe") of pid: "/proc/4242/maps" unless the source says otherwise.
func place(src source, pid int, what string) string {
	if pn, ok := src.(placeNamer); ok {
		return pn.place(pid, what)
	}
	return "/proc/" + strconv.Itoa(pid) + "/" + what
}
