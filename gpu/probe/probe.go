package probe

import (
	"context"
	"errors"
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/internal/safefile"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"gpuwizard/gpu/nvml"
)

// ErrTimeout is returned (wrapped) for a source that did not answer in time.
var ErrTimeout = errors.New("gpu: timed out")

// Runner runs an external command and returns its standard output. Tests
// pass recorded outputs; the live machine uses ExecRunner.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands with os/exec in a process group of their own,
// and kills the whole group when ctx ends and when the command returns:
// no process it started outlives Run.
type ExecRunner struct {
	Env []string // environment of the child; nil inherits
}

// waitDelay is how long Run waits, once the command ended or was killed,
// for its output pipes to close: a grandchild that left the group may hold
// them open.
const waitDelay = 200 * time.Millisecond

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	ownGroup(cmd)
	cmd.Env = r.Env
	cmd.WaitDelay = waitDelay
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// The command has ended; what it started has not, unless killed.
	killGroup(cmd)
	if ctx.Err() != nil {
		return out, fmt.Errorf("%s: %w", name, errors.Join(ErrTimeout, ctx.Err()))
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		if msg != "" {
			return out, fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Options say where and how to probe. The zero value probes the live machine.
type Options struct {
	// Root is the folder a fake machine's files lie in (tests): a path of
	// the probed machine is read at Root joined with its components
	// (FakeRootFile). "" or "/" reads the live machine's own paths.
	Root string
	// Home and Cwd are the user's home and working folder, as paths on the
	// probed machine. Empty: taken from the environment (HOME, or
	// USERPROFILE on Windows) and os.Getwd.
	Home, Cwd string
	// Environ is the environment to judge. Nil: os.Environ(). On Windows
	// its names are read without case (Path is PATH).
	Environ map[string]string
	// NVML is the management library. Nil: the real one (nvml.New()).
	NVML nvml.Library
	// Runner runs external commands. Nil: ExecRunner.
	Runner Runner
	// Timeout bounds each source. Zero: 3 s.
	Timeout time.Duration
	// Deep runs the embedded Python check in every interpreter with torch.
	Deep bool
	// DeepTimeout bounds each interpreter's deep check. Zero: 90 s.
	DeepTimeout time.Duration
	// GOOS and GOARCH name the probed system. Empty: this program's.
	GOOS, GOARCH string
	// Now stamps the facts. Nil: time.Now.
	Now func() time.Time
	// Only names the sources to run ("nvml", "pci", "driver", "host",
	// "cuda_toolkits", "cuda_libraries", "python"); nil runs them all. The
	// health check runs the driver layer's alone, in milliseconds.
	Only []string
}

func (o *Options) fill() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Environ == nil {
		o.Environ = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				o.Environ[k] = v
			}
		}
	}
	sys := systemFor(o.GOOS, o.Environ)
	o.Environ = sys.environ(o.Environ)
	if o.Home == "" {
		o.Home = o.Environ[sys.homeVar()]
	}
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Second
	}
	if o.DeepTimeout <= 0 {
		o.DeepTimeout = 90 * time.Second
	}
	if o.GOARCH == "" {
		o.GOARCH = runtime.GOARCH
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// prober holds the filled options of one Probe call, and the files it
// skipped (its sources run concurrently: mu guards skipped).
type prober struct {
	o       Options
	sys     system // the probed system's rules and sources (Options.GOOS)
	mu      sync.Mutex
	skipped []gpu.SkippedFile
	// folded caches the fake root's folders as read without case (a
	// Windows machine's names on a host that has case), guarded by mu.
	folded map[string]map[string]string
}

// newProber is the prober of filled options.
func newProber(o Options) *prober {
	return &prober{o: o, sys: systemFor(o.GOOS, o.Environ)}
}

// trackedRunner counts the commands running, so that Probe returns only
// once every command it started has ended (killed, for the sources that
// timed out). After close it starts no more.
type trackedRunner struct {
	r       Runner
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// errProbeDone refuses a command asked for after Probe returned (by a
// source that had timed out).
var errProbeDone = errors.New("gpu: the probe has returned")

func (t *trackedRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", name, errors.Join(ErrTimeout, errProbeDone))
	}
	t.running.Add(1)
	t.mu.Unlock()
	defer t.running.Done()
	return t.r.Run(ctx, name, args...)
}

// closeAndWait starts no more commands and waits for those running, at
// most limit (ExecRunner returns within its waitDelay of a cancellation;
// a Runner that ignores its context is not waited for past limit).
func (t *trackedRunner) closeAndWait(limit time.Duration) {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	done := make(chan struct{})
	go func() {
		t.running.Wait()
		close(done)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
}

// Size caps of the files the probe reads. Each is generous for what the
// file holds (a pyvenv.cfg or a version.py is a few KB, a /proc or /sys
// value less) and small enough that a link to /dev/zero or a huge file
// costs nothing: a bigger file is skipped with a note in the facts.
const (
	capSmall  = 64 << 10 // pyvenv.cfg, .python-version, os-release, CUDA's version.json/txt, /proc and /sys values
	capSource = 1 << 20  // Python sources (version.py, build_info.py), C headers, /proc/modules, /proc/1/cgroup
	capLine   = 4 << 10  // the first line of a script (#!interpreter)
)

// live says whether the probe reads this machine's own files.
func (p *prober) live() bool { return p.o.Root == "/" }

// file turns a path on the probed machine into a path to read here: the
// path itself on the live machine, else the path's components joined
// onto the fake root.
func (p *prober) file(path string) string {
	if p.live() {
		return path
	}
	comps := p.sys.components(path)
	if _, folds := p.sys.(windowsSystem); folds {
		return p.foldedFile(comps)
	}
	return filepath.Join(append([]string{p.o.Root}, comps...)...)
}

// foldedFile joins a Windows path's components onto the fake root,
// each named as the folder spells it (C:\WINDOWS is the Windows folder,
// as on Windows); a name no entry matches, and one with wildcards, is
// kept as written.
func (p *prober) foldedFile(comps []string) string {
	host := p.o.Root
	for _, c := range comps {
		if !strings.ContainsAny(c, "*?[") {
			c = p.foldName(host, c)
		}
		host = filepath.Join(host, c)
	}
	return host
}

// foldName is the entry of dir whose name is name without case, or name.
func (p *prober) foldName(dir, name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names, ok := p.folded[dir]
	if !ok {
		ents, _ := os.ReadDir(dir)
		names = make(map[string]string, len(ents))
		for _, e := range ents {
			names[strings.ToLower(e.Name())] = e.Name()
		}
		if p.folded == nil {
			p.folded = map[string]map[string]string{}
		}
		p.folded[dir] = names
	}
	if real, ok := names[strings.ToLower(name)]; ok {
		return real
	}
	return name
}

// unroot turns a file read here (a glob's match, a resolved link) back
// into the probed machine's path; it is file's inverse.
func (p *prober) unroot(host string) string {
	if p.live() {
		return host
	}
	rel, err := filepath.Rel(p.o.Root, host)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return host
	}
	if rel == "." {
		return p.sys.fromComponents(nil)
	}
	return p.sys.fromComponents(strings.Split(rel, string(filepath.Separator)))
}

// glob lists the probed machine's paths matching pattern (a path of the
// probed machine with * and ? in its names).
func (p *prober) glob(pattern string) []string {
	m, _ := filepath.Glob(p.file(pattern))
	out := make([]string, 0, len(m))
	for _, h := range m {
		out = append(out, p.unroot(h))
	}
	return out
}

// readFile reads a file of the probed machine through safefile: a regular
// file of at most limit bytes. A device (a link to /dev/zero), a named pipe
// or a bigger file is never read: it is noted in the facts (Skipped) and
// its error returned, as for a missing file, which the sources treat as
// unknown.
func (p *prober) readFile(path string, limit int64) ([]byte, error) {
	b, err := safefile.ReadFile(p.file(path), limit, p.sys.base(path)+" files")
	if err != nil {
		p.noteSkipped(path, err)
		return nil, err
	}
	return b, nil
}

// openFile opens a regular file of the probed machine through safefile,
// noting what it refuses as readFile does.
func (p *prober) openFile(path string) (*os.File, error) {
	f, _, err := safefile.Open(p.file(path))
	if err != nil {
		p.noteSkipped(path, err)
		return nil, err
	}
	return f, nil
}

// noteSkipped records a file that is not a regular file or is too big;
// a missing or unreadable file is not worth a note.
func (p *prober) noteSkipped(path string, err error) {
	if !errors.Is(err, safefile.ErrNotRegular) && !errors.Is(err, safefile.ErrTooLarge) {
		return
	}
	reason := err.Error()
	if full := p.file(path); full != path {
		reason = strings.ReplaceAll(reason, full, path) // name it as on the probed machine
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.skipped {
		if s.Path == path {
			return
		}
	}
	p.skipped = append(p.skipped, gpu.SkippedFile{Path: path, Reason: reason})
}

// skippedFiles are the notes, sorted by path.
func (p *prober) skippedFiles() []gpu.SkippedFile {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := append([]gpu.SkippedFile(nil), p.skipped...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (p *prober) exists(path string) bool {
	_, err := os.Stat(p.file(path))
	return err == nil
}

// lookPathAll finds the command name in the probed PATH, as the probed
// system's shell does (Windows: name.exe, name.bat... by PATHEXT), and
// returns every hit, in order.
func (p *prober) lookPathAll(name string) []string {
	var hits []string
	seen := map[string]bool{}
	for _, dir := range p.pathDirs() {
		for _, file := range p.sys.exeNames(name) {
			full := p.sys.join(dir, file)
			if seen[p.sys.key(full)] {
				continue
			}
			seen[p.sys.key(full)] = true
			if st, err := os.Stat(p.file(full)); err == nil && p.sys.executable(file, st.Mode()) {
				hits = append(hits, full)
				break
			}
		}
	}
	return hits
}

// pathDirs are the absolute folders of the probed PATH, in order.
func (p *prober) pathDirs() []string {
	var out []string
	for _, dir := range p.sys.splitList(p.o.Environ["PATH"]) {
		if p.sys.isAbs(dir) {
			out = append(out, dir)
		}
	}
	return out
}

func (p *prober) lookPath(name string) string {
	if h := p.lookPathAll(name); len(h) > 0 {
		return h[0]
	}
	return ""
}

// source is one independent probe: it returns a function that records its
// answer into the facts (applied by Probe's goroutine, so sources never
// share memory), or an error saying why it could not answer.
type source struct {
	name string
	run  func(ctx context.Context) (func(*gpu.Facts), error)
}

// Probe reads the live machine (or the fake one the options name). Every
// source runs concurrently under its own timeout; one that fails, hangs or
// panics is recorded in Facts.Sources with the reason, and the others still
// answer. Probe itself never fails: what could not be read is unknown.
func Probe(ctx context.Context, opts Options) *gpu.Facts {
	opts.fill()
	runner := &trackedRunner{r: opts.Runner}
	opts.Runner = runner
	// Every source's context has ended when Probe returns (each is
	// cancelled by runSource): wait for their commands to be killed.
	defer runner.closeAndWait(2 * time.Second)
	p := newProber(opts)
	f := &gpu.Facts{Schema: gpu.FactsSchema, CollectedAt: opts.Now().UTC(), Origin: "live"}
	f.Host.OS, f.Host.Arch = opts.GOOS, opts.GOARCH
	f.Env = p.probeEnv()

	sources := append([]source{{"nvml", p.probeNVML}}, p.sys.sources(p)...)
	if opts.Only != nil {
		kept := sources[:0]
		for _, s := range sources {
			if gpu.Contains(opts.Only, s.name) {
				kept = append(kept, s)
			}
		}
		sources = kept
	}
	type result struct {
		apply func(*gpu.Facts)
		st    gpu.SourceStatus
	}
	results := make([]result, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].apply, results[i].st = runSource(ctx, s, opts.Timeout)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.apply != nil {
			r.apply(f)
		}
		f.Sources = append(f.Sources, r.st)
	}
	// The process table needs NVML's PIDs; it is cheap and local.
	p.sys.nameProcesses(p, f)
	if opts.Deep {
		start := time.Now()
		f.Deep = p.deepCheck(ctx, f)
		f.Sources = append(f.Sources, gpu.SourceStatus{Name: "deep", OK: true, Millis: ms(time.Since(start))})
	}
	f.Skipped = p.skippedFiles()
	return f
}

// runSource runs one source with a timeout, turning panics into errors.
func runSource(ctx context.Context, s source, timeout time.Duration) (func(*gpu.Facts), gpu.SourceStatus) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	type out struct {
		apply func(*gpu.Facts)
		err   error
	}
	ch := make(chan out, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- out{err: fmt.Errorf("%s: internal error: %v\n%s", s.name, r, firstLines(string(debug.Stack()), 8))}
			}
		}()
		a, err := s.run(ctx)
		ch <- out{a, err}
	}()
	st := gpu.SourceStatus{Name: s.name}
	select {
	case o := <-ch:
		st.Millis = ms(time.Since(start))
		st.OK = o.err == nil
		if o.err != nil {
			st.Error = o.err.Error()
			st.TimedOut = errors.Is(o.err, ErrTimeout)
		}
		return o.apply, st
	case <-ctx.Done():
		st.Millis = ms(time.Since(start))
		st.TimedOut = true
		st.Error = fmt.Sprintf("%s did not answer within %s", s.name, timeout)
		return nil, st
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// envNames are the variables that decide what CUDA sees.
var envNames = []string{
	"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
	"CUDA_HOME", "CUDA_PATH", "PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "PYENV_VERSION",
	"PYTHONPATH", "PYTHONNOUSERSITE", "LD_PRELOAD",
}

func (p *prober) probeEnv() []gpu.EnvVar {
	names := append(append([]string{}, envNames...), p.sys.envNames(p.o.Environ)...)
	out := make([]gpu.EnvVar, 0, len(names))
	for _, n := range names {
		v, ok := p.o.Environ[n]
		out = append(out, gpu.EnvVar{Name: n, Value: v, Set: ok})
	}
	return out
}
