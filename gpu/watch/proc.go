package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// ErrNoProcess is returned (wrapped) when a PID names no process.
var ErrNoProcess = errors.New("watch: no such process")

// proc is what /proc says about one process at one moment.
type proc struct {
	PID       int
	PPID      int
	Comm      string // the kernel's short name (15 characters at most)
	State     byte   // R, S, D, Z, T, ...
	Ticks     uint64 // utime + stime, in clock ticks
	Threads   int
	StartTime uint64 // in clock ticks after boot: tells a reused PID apart
	UID       int    // real user id; -1 unknown
	CPUs      int    // CPUs it may run on (Cpus_allowed_list); 0 unknown
	Cmdline   []string
}

// zombie reports whether the process has ended and waits to be reaped.
func (p proc) zombie() bool { return p.State == 'Z' || p.State == 'X' }

// procFS reads /proc (and /etc/passwd) of the watched machine through fsys,
// whose root is the machine's "/".
type procFS struct {
	fsys fs.FS
}

func procPath(pid int, name string) string {
	return path.Join("proc", strconv.Itoa(pid), name)
}

func (p procFS) readFile(name string) ([]byte, error) {
	return fs.ReadFile(p.fsys, name)
}

// readLink reads a symbolic link (exe, cwd) when the file system can.
func (p procFS) readLink(name string) (string, error) {
	rl, ok := p.fsys.(fs.ReadLinkFS)
	if !ok {
		return "", fmt.Errorf("reading the link %s: %w", name, errors.ErrUnsupported)
	}
	return rl.ReadLink(name)
}

// stat reads /proc/PID/stat and /proc/PID/status and /proc/PID/cmdline.
// A process that does not exist gives an error wrapping ErrNoProcess.
func (p procFS) stat(pid int) (proc, error) {
	b, err := p.readFile(procPath(pid, "stat"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return proc{}, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return proc{}, fmt.Errorf("reading /proc/%d/stat: %w", pid, err)
	}
	pr, err := parseStat(pid, string(b))
	if err != nil {
		return proc{}, err
	}
	pr.UID, pr.CPUs = -1, 0
	if st, err := p.readFile(procPath(pid, "status")); err == nil {
		parseStatus(&pr, string(st))
	}
	if cl, err := p.readFile(procPath(pid, "cmdline")); err == nil {
		pr.Cmdline = splitNUL(cl)
	}
	return pr, nil
}

// parseStat reads the fields of /proc/PID/stat that matter here. The
// command name is in parentheses and may itself hold spaces and
// parentheses, so the fields after it are found from the last ')'.
func parseStat(pid int, s string) (proc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	pr := proc{PID: pid, Comm: s[open+1 : end]}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %d fields, want at least 22", pid, len(f)+2)
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(f[n-3], 10, 64)
		return v
	}
	if len(f[0]) > 0 {
		pr.State = f[0][0]
	}
	pr.PPID = int(num(4))
	pr.Ticks = num(14) + num(15)
	pr.Threads = int(num(20))
	pr.StartTime = num(22)
	return pr, nil
}

// parseStatus reads the real user id and the CPUs the process may use.
func parseStatus(pr *proc, s string) {
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Uid":
			if f := strings.Fields(v); len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					pr.UID = n
				}
			}
		case "Cpus_allowed_list":
			pr.CPUs = countCPUList(v)
		}
	}
}

// countCPUList counts the CPUs of a list like "0-3,8,10-11".
func countCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// environ reads the environment the process was started with. Changes the
// program made later (os.environ in Python) are not visible.
func (p procFS) environ(pid int) (map[string]string, error) {
	b, err := p.readFile(procPath(pid, "environ"))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/environ: %w", pid, err)
	}
	env := map[string]string{}
	for _, kv := range splitNUL(b) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// mappedFiles lists the files mapped into the process (its loaded
// libraries), each once, in the order of /proc/PID/maps.
func (p procFS) mappedFiles(pid int) ([]string, error) {
	b, err := p.readFile(procPath(pid, "maps"))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/maps: %w", pid, err)
	}
	return parseMaps(string(b)), nil
}

// parseMaps reads the path names of /proc/PID/maps lines: "address perms
// offset dev inode path", where the path may hold spaces and may end in
// " (deleted)".
func parseMaps(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 || len(strings.Fields(line[:i])) != 5 {
			continue // anonymous, [heap], [stack], [vdso]
		}
		name := strings.TrimSuffix(line[i:], " (deleted)")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// pids lists the numeric entries of /proc, in increasing order.
func (p procFS) pids() ([]int, error) {
	ents, err := fs.ReadDir(p.fsys, "proc")
	if err != nil {
		return nil, fmt.Errorf("listing /proc: %w", err)
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// table reads every process's stat: the process tree of the machine.
func (p procFS) table() (map[int]proc, error) {
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	t := make(map[int]proc, len(pids))
	for _, pid := range pids {
		b, err := p.readFile(procPath(pid, "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		if pr, err := parseStat(pid, string(b)); err == nil {
			t[pid] = pr
		}
	}
	return t, nil
}

// maxTree bounds the processes followed under one watched process.
const maxTree = 256

// descendants lists pid's children, grandchildren and so on, breadth
// first, from a process table.
func descendants(t map[int]proc, pid int) []int {
	kids := map[int][]int{}
	for _, pr := range t {
		kids[pr.PPID] = append(kids[pr.PPID], pr.PID)
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 && len(out) < maxTree {
		cur := queue[0]
		queue = queue[1:]
		ks := kids[cur]
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

// userName finds a user id's name in /etc/passwd; the number when unknown.
func (p procFS) userName(uid int) string {
	if uid < 0 {
		return "unknown"
	}
	b, err := p.readFile("etc/passwd")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) > 2 && f[2] == strconv.Itoa(uid) {
				return f[0]
			}
		}
	}
	return "uid " + strconv.Itoa(uid)
}

// numCPU counts the machine's CPUs from /proc/stat; 0 when unknown.
func (p procFS) numCPU() int {
	b, err := p.readFile("proc/stat")
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "cpu") && len(line) > 3 && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}
