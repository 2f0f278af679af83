package watch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procFS reads Linux's /proc (and /etc/passwd, /sys/fs/cgroup) of the
// watched machine through fsys, whose root is the machine's "/". It is
// plain Go over an fs.FS: the live machine on Linux, a fake root in tests
// on every platform.
type procFS struct {
	fsys fs.FS
	hz   int // USER_HZ: the unit of /proc/PID/stat's times
	self int // the real user id running the watch; -1 unknown

	mu        sync.Mutex
	bootRead  bool
	boot      time.Time // from /proc/stat's btime; zero unknown
	users     map[int]string
	minorsAt  time.Time
	minorsMap map[string]int
}

func newProcFS(fsys fs.FS, hz int) *procFS {
	return &procFS{fsys: fsys, hz: hz, self: -1}
}

// ownedBySelf reports whether the process's real user runs the watch.
func (p *procFS) ownedBySelf(pr proc) bool { return pr.UID >= 0 && pr.UID == p.self }

var (
	_ source        = (*procFS)(nil)
	_ childLister   = (*procFS)(nil)
	_ cwdReader     = (*procFS)(nil)
	_ ownerReader   = (*procFS)(nil)
	_ deviceReader  = (*procFS)(nil)
	_ schedReader   = (*procFS)(nil)
	_ gpuNodeReader = (*procFS)(nil)
)

func procPath(pid int, name string) string {
	return path.Join("proc", strconv.Itoa(pid), name)
}

func (p *procFS) readFile(name string) ([]byte, error) {
	return fs.ReadFile(p.fsys, name)
}

// readLink reads a symbolic link (exe, cwd, fd) when the file system can.
func (p *procFS) readLink(name string) (string, error) {
	rl, ok := p.fsys.(fs.ReadLinkFS)
	if !ok {
		return "", fmt.Errorf("reading the link %s: %w", name, errors.ErrUnsupported)
	}
	return rl.ReadLink(name)
}

func (p *procFS) exe(pid int) (string, error) { return p.readLink(procPath(pid, "exe")) }
func (p *procFS) cwd(pid int) (string, error) { return p.readLink(procPath(pid, "cwd")) }

// proc reads /proc/PID/stat, status and cmdline. A process that does not
// exist gives an error wrapping ErrNoProcess.
func (p *procFS) proc(pid int) (proc, error) {
	b, err := p.readFile(procPath(pid, "stat"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return proc{}, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return proc{}, fmt.Errorf("reading /proc/%d/stat: %w", pid, err)
	}
	pr, err := p.parseStat(pid, string(b))
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

// parseStat reads /proc/PID/stat with the source's clock rate and boot
// time.
func (p *procFS) parseStat(pid int, s string) (proc, error) {
	pr, ticks, err := parseStat(pid, s)
	if err != nil {
		return pr, err
	}
	hz := p.hz
	if hz <= 0 {
		hz = 100
	}
	pr.CPU = time.Duration(ticks) * time.Second / time.Duration(hz)
	if boot := p.bootTime(); !boot.IsZero() {
		pr.Started = boot.Add(time.Duration(pr.StartTime) * time.Second / time.Duration(hz))
	}
	return pr, nil
}

// parseStat reads the fields of /proc/PID/stat that matter here, with the
// CPU time in clock ticks. The command name is in parentheses and may
// itself hold spaces and parentheses, so the fields after it are found
// from the last ')'.
func parseStat(pid int, s string) (proc, uint64, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	pr := proc{PID: pid, Comm: s[open+1 : end], UID: -1}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return proc{}, 0, fmt.Errorf("/proc/%d/stat: %d fields, want at least 22", pid, len(f)+2)
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(f[n-3], 10, 64)
		return v
	}
	if len(f[0]) > 0 {
		pr.State = f[0][0]
	}
	pr.PPID = int(num(4))
	pr.Threads = int(num(20))
	pr.StartTime = num(22)
	return pr, num(14) + num(15), nil
}

// bootTime reads btime from /proc/stat once; zero when it has none.
func (p *procFS) bootTime() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.bootRead {
		p.bootRead = true
		if b, err := p.readFile("proc/stat"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "btime "); ok {
					if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
						p.boot = time.Unix(n, 0)
					}
				}
			}
		}
	}
	return p.boot
}

// parseStatus reads the real user id, the CPUs the process may use and
// its PIDs in nested PID namespaces.
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
		case "NSpid":
			pr.NSpid = nil
			for _, f := range strings.Fields(v) {
				if n, err := strconv.Atoi(f); err == nil {
					pr.NSpid = append(pr.NSpid, n)
				}
			}
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

// environ reads the environment the process was started with (or last
// exec'd with). Changes the program made later (os.environ in Python) are
// not visible.
func (p *procFS) environ(pid int) (map[string]string, error) {
	b, err := p.readFile(procPath(pid, "environ"))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/environ: %w", pid, err)
	}
	return parseEnviron(splitNUL(b)), nil
}

// parseEnviron turns NAME=value entries into a map.
func parseEnviron(kvs []string) map[string]string {
	env := map[string]string{}
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// modules lists the files mapped into the process (its loaded libraries,
// and GPU device files a CUDA context maps), each once, in the order of
// /proc/PID/maps. The file is read line by line: a process may hold
// hundreds of thousands of mappings (vm.max_map_count), and watch holds
// only the names, at most maxMapped of them.
func (p *procFS) modules(pid int) ([]string, error) {
	f, err := p.fsys.Open(procPath(pid, "maps"))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/maps: %w", pid, err)
	}
	defer f.Close()
	out, err := readMaps(f)
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/maps: %w", pid, err)
	}
	return out, nil
}

// maxMapped bounds the distinct files kept from one process's maps (a
// CUDA torch process maps a few hundred).
const maxMapped = 8192

// parseMaps reads the path names of /proc/PID/maps lines: "address perms
// offset dev inode path", where the path may hold spaces and may end in
// " (deleted)".
func parseMaps(s string) []string {
	out, _ := readMaps(strings.NewReader(s))
	return out
}

// readMaps is parseMaps over a reader, one line at a time.
func readMaps(r io.Reader) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	br := bufio.NewReaderSize(r, 64<<10)
	for len(out) < maxMapped {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than any path (PATH_MAX is 4096): skip it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if name, ok := mapsPath(line); ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// fieldCount counts the space-separated fields of b without allocating.
func fieldCount(b []byte) int {
	n, in := 0, false
	for _, c := range b {
		sp := c == ' ' || c == '\t'
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// mapsPath is the path name of one maps line; ok is false for an
// anonymous mapping ([heap], [stack], [vdso]).
func mapsPath(b []byte) (string, bool) {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	i := bytes.IndexByte(b, '/')
	if i < 0 || fieldCount(b[:i]) != 5 {
		return "", false
	}
	return string(bytes.TrimSuffix(b[i:], []byte(" (deleted)"))), true
}

// pids lists the numeric entries of /proc.
func (p *procFS) pids() ([]int, error) {
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
	return out, nil
}

// table reads every process's stat: the process tree of the machine.
func (p *procFS) table() (map[int]proc, error) {
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
		if pr, err := p.parseStat(pid, string(b)); err == nil {
			t[pid] = pr
		}
	}
	return t, nil
}

// children lists the children of every thread of pid from
// /proc/PID/task/TID/children; ok is false when the kernel has no such
// files (CONFIG_PROC_CHILDREN off, or a fake root without them).
func (p *procFS) children(pid int) ([]int, bool) {
	tasks, err := fs.ReadDir(p.fsys, procPath(pid, "task"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := fs.Stat(p.fsys, procPath(pid, "stat")); serr != nil {
				return nil, true // the process has ended: no children
			}
		}
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		name := path.Join(procPath(pid, "task"), t.Name())
		b, err := p.readFile(path.Join(name, "children"))
		if err != nil {
			if _, serr := fs.Stat(p.fsys, name); serr != nil {
				continue // the thread ended meanwhile
			}
			return nil, false
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, true
}

// maxFDs bounds the descriptors read per process.
const maxFDs = 4096

// openDevices lists the GPU device files among the process's open file
// descriptors: /dev/nvidiaN, /dev/nvidiactl, /dev/nvidia-uvm,
// /dev/nvidia-caps/..., and WSL 2's /dev/dxg.
func (p *procFS) openDevices(pid int) ([]string, error) {
	dir := procPath(pid, "fd")
	ents, err := p.readDirFirst(dir, maxFDs)
	if err != nil {
		return nil, fmt.Errorf("reading /proc/%d/fd: %w", pid, err)
	}
	var out []string
	seen := map[string]bool{}
	for i, e := range ents {
		if i >= maxFDs {
			break
		}
		target, err := p.readLink(path.Join(dir, e.Name()))
		if err != nil || !isGPUDevice(target) || seen[target] {
			continue
		}
		seen[target] = true
		out = append(out, target)
	}
	return out, nil
}

// readDirFirst lists at most n entries of a folder, without reading the
// rest (a process may hold a million descriptors open): in the kernel's
// order for /proc/PID/fd, the lowest descriptors first.
func (p *procFS) readDirFirst(dir string, n int) ([]fs.DirEntry, error) {
	f, err := p.fsys.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: errors.New("not a folder")}
	}
	ents, err := rd.ReadDir(n)
	if errors.Is(err, io.EOF) {
		err = nil // an empty folder
	}
	return ents, err
}

// runWait is how long the process's main thread has waited on a run queue
// for a CPU (/proc/PID/schedstat's second field, in ns).
func (p *procFS) runWait(pid int) (time.Duration, bool) {
	b, err := p.readFile(procPath(pid, "schedstat"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(n), true
}

// userName finds a user id's name in /etc/passwd; "uid N" when unknown.
func (p *procFS) userName(pr proc) string {
	uid := pr.UID
	if uid < 0 {
		return "unknown"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if name, ok := p.users[uid]; ok {
		return name
	}
	name := "uid " + strconv.Itoa(uid)
	if b, err := p.readFile("etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) > 2 && f[2] == strconv.Itoa(uid) {
				name = f[0]
				break
			}
		}
	}
	if p.users == nil {
		p.users = map[int]string{}
	}
	p.users[uid] = name
	return name
}

// numCPU counts the machine's CPUs from /proc/stat; 0 when unknown.
func (p *procFS) numCPU() int {
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

// isFile reports whether path, a path on the watched machine, is a
// regular file (through links).
func (p *procFS) isFile(name string) bool {
	if !path.IsAbs(name) {
		return false
	}
	st, err := fs.Stat(p.fsys, strings.TrimPrefix(path.Clean(name), "/"))
	return err == nil && st.Mode().IsRegular()
}
