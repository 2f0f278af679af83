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
	// Root is prefixed to every file path read (a fake machine in tests). "" is "/".
	Root string
	// Home and Cwd are the user's home and working folder, as paths on the
	// probed machine. Empty: taken from the environment and os.Getwd.
	Home, Cwd string
	// Environ is the environment to judge. Nil: os.Environ().
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
	if o.Environ == nil {
		o.Environ = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				o.Environ[k] = v
			}
		}
	}
	if o.Home == "" {
		o.Home = o.Environ["HOME"]
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
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
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
	mu      sync.Mutex
	skipped []gpu.SkippedFile
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

// file turns a path on the probed machine into a path to read here.
func (p *prober) file(path string) string {
	if p.o.Root == "/" {
		return path
	}
	return filepath.Join(p.o.Root, path)
}

// readFile reads a file of the probed machine through safefile: a regular
// file of at most limit bytes. A device (a link to /dev/zero), a named pipe
// or a bigger file is never read: it is noted in the facts (Skipped) and
// its error returned, as for a missing file, which the sources treat as
// unknown.
func (p *prober) readFile(path string, limit int64) ([]byte, error) {
	b, err := safefile.ReadFile(p.file(path), limit, filepath.Base(path)+" files")
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

// lookPath finds name in the probed PATH and returns every hit, in order.
func (p *prober) lookPathAll(name string) []string {
	var hits []string
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(p.o.Environ["PATH"]) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		full := filepath.Join(dir, name)
		if seen[full] {
			continue
		}
		seen[full] = true
		st, err := os.Stat(p.file(full))
		if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			hits = append(hits, full)
		}
	}
	return hits
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
	p := &prober{o: opts}
	f := &gpu.Facts{Schema: gpu.FactsSchema, CollectedAt: opts.Now().UTC(), Origin: "live"}
	f.Host.OS, f.Host.Arch = opts.GOOS, opts.GOARCH
	f.Env = p.probeEnv()

	sources := []source{
		{"nvml", p.probeNVML},
		{"pci", p.probePCI},
		{"driver", p.probeDriver},
		{"host", p.probeHost},
		{"cuda_toolkits", p.probeToolkits},
		{"cuda_libraries", p.probeLibraries},
		{"python", p.probePythons},
	}
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
	p.nameProcesses(f)
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
	out := make([]gpu.EnvVar, 0, len(envNames))
	for _, n := range envNames {
		v, ok := p.o.Environ[n]
		out = append(out, gpu.EnvVar{Name: n, Value: v, Set: ok})
	}
	return out
}
