package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"

	"gpuwizard/gpu/watch"
)

// watchHelp is the help of `gpuwizard watch`.
func watchHelp() help {
	return help{
		usage: `Usage: gpuwizard watch [flags] PID
       gpuwizard watch [flags] -- COMMAND [ARGS...]`,
		about: `Says where a running training really runs: on which NVIDIA GPU and how busy,
or on the CPU and why (a CPU-only build, CUDA_VISIBLE_DEVICES, a model never
moved to the GPU, no usable GPU, a GPU starved by data loading). It follows
the process and its children (DataLoader workers, torchrun ranks) through
NVML, /proc (CPU use, loaded libraries, environment) and the doctor.

With -- COMMAND it starts the command, passes its output through unchanged,
and writes its own lines to standard error (with --json, its JSON lines go to
standard output, each at the start of a line).
`,
		examples: `  gpuwizard watch 12345
  gpuwizard watch --once --json 12345
  gpuwizard watch -- python train.py --epochs 10
`,
		exit: `0 on a GPU; 1 on the CPU, starved, unreadable or ended without a
verdict on a GPU; 2 usage error. For -- COMMAND without --once: the
command's own exit status (127 when it cannot be found, 126 when it cannot be
started, 128+N when signal N ended it).
`,
	}
}

// Watch runs `gpuwizard watch`.
func Watch(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	var (
		asJSON   = fs.Bool("json", false, "one JSON object per line on standard output: {\"on_gpu\", \"state\", \"verdict\", \"findings\", \"evidence\", ...}")
		interval = fs.Duration("interval", 5*time.Second, "time between live verdicts")
		once     = fs.Bool("once", false, "give one verdict after the sampling window, then exit (PID) or let the command run to its end quietly")
		window   = fs.Duration("window", 5*time.Second, "with --once: how long to sample before the verdict (it waits up to 30s more while a Python is still importing its framework)")
	)
	if code, ok := parseFlags(fs, args, env, watchHelp()); !ok {
		return code
	}
	if *interval < 100*time.Millisecond || *window < 100*time.Millisecond {
		fmt.Fprintln(env.Stderr, "watch: --interval and --window must be at least 100ms")
		return ExitUsage
	}
	rest := fs.Args()
	i := len(args) - len(rest) - 1
	dashed := i >= 0 && args[i] == "--"
	if len(rest) == 0 {
		fmt.Fprintln(env.Stderr, "watch: name a PID or a command after -- (see gpuwizard watch -h)")
		return ExitUsage
	}
	if runtime.GOOS != "linux" && env.Watch.Root == "" {
		fmt.Fprintln(env.Stderr, "watch: reading a running process needs Linux's /proc; on this system run gpuwizard doctor instead")
		return ExitUsage
	}
	wr := &watchRun{env: env, json: *asJSON, once: *once, interval: *interval, window: *window}
	if dashed {
		return wr.command(ctx, rest)
	}
	if len(rest) > 1 {
		fmt.Fprintf(env.Stderr, "watch: unexpected argument %q (to start a command, put it after --)\n", rest[1])
		return ExitUsage
	}
	pid, err := strconv.Atoi(rest[0])
	if err != nil || pid <= 0 {
		fmt.Fprintf(env.Stderr, "watch: %q is not a process ID (to start a command, put it after --: gpuwizard watch -- %s)\n", rest[0], rest[0])
		return ExitUsage
	}
	if pid == os.Getpid() && env.Watch.Root == "" {
		fmt.Fprintln(env.Stderr, "watch: that is this gpuwizard process")
		return ExitUsage
	}
	return wr.pid(ctx, pid)
}

// watchRun is one `gpuwizard watch`: where its lines go and how often.
type watchRun struct {
	env      Env
	json     bool
	once     bool
	interval time.Duration
	window   time.Duration
	text     io.Writer // watch's own text lines
	color    bool
	jsonOut  *lineSync // JSON lines (stdout, kept off the command's half lines)
	lastKey  string
}

// maxEarlyWait is how long --once waits beyond its window for a Python
// that is still importing its framework.
const maxEarlyWait = 30 * time.Second

func (wr *watchRun) options() watch.Options {
	o := wr.env.Watch
	if wr.once {
		o.Window = wr.window + time.Second
	} else {
		o.Window = max(10*time.Second, 2*wr.interval)
	}
	return o
}

// step is the time between readings: a verdict rests on several.
func (wr *watchRun) step() time.Duration {
	d := wr.interval / 2
	if wr.once {
		d = wr.window / 5
	}
	return min(max(d, 50*time.Millisecond), time.Second)
}

// pid watches a process that is already running.
func (wr *watchRun) pid(ctx context.Context, pid int) int {
	wr.text, wr.color = wr.env.Stdout, wr.env.Color
	wr.jsonOut = &lineSync{w: wr.env.Stdout, atStart: true}
	w := watch.New(wr.options(), pid)
	defer w.Close()
	if err := w.Sample(ctx); err != nil {
		if errors.Is(err, watch.ErrNoProcess) {
			fmt.Fprintf(wr.env.Stderr, "watch: no process %d (it may have ended; list yours with: ps -u $USER -o pid,etime,cmd)\n", pid)
			return ExitUsage
		}
		fmt.Fprintf(wr.env.Stderr, "watch: %v\n", err)
		return ExitFailed
	}
	last := wr.loop(ctx, w, nil)
	return stateExit(last)
}

// stateExit is the exit status of a verdict: 0 only on a GPU.
func stateExit(s watch.State) int {
	if s == watch.StateGPU {
		return ExitOK
	}
	return ExitFailed
}

// loop samples, reports every interval (or once), and ends with a summary
// when the process ends or ctx is cancelled. For a command watch started,
// ex is closed when it has ended, with its exit status. It returns the last
// state the process was judged in while it ran.
func (wr *watchRun) loop(ctx context.Context, w *watch.Watcher, ex *exitBox) watch.State {
	var exited <-chan struct{}
	if ex != nil {
		exited = ex.done
	}
	start := time.Now()
	next := start.Add(wr.interval)
	if wr.once {
		next = start.Add(wr.window)
	}
	tick := time.NewTicker(wr.step())
	defer tick.Stop()
	for {
		if w.Ended() {
			if ex != nil {
				if st, ok := ex.wait(5 * time.Second); ok {
					w.SetExitStatus(st)
				}
			}
			rep := w.Report(ctx)
			wr.final(rep)
			return rep.Summary.LastState
		}
		if now := time.Now(); !now.Before(next) {
			rep := w.Report(ctx)
			if wr.once {
				if rep.Early() && now.Sub(start) < wr.window+maxEarlyWait {
					next = now.Add(wr.step())
				} else {
					wr.emit(rep, true)
					return rep.State
				}
			} else {
				wr.emit(rep, false)
				next = now.Add(wr.interval)
			}
		}
		select {
		case <-ctx.Done():
			rep := w.Report(context.WithoutCancel(ctx))
			s := w.Summary()
			rep.Final, rep.Summary = true, &s
			wr.final(rep)
			return s.LastState
		case <-exited:
			w.SetExitStatus(ex.code)
			exited = nil
		case <-tick.C:
		}
		_ = w.Sample(ctx)
	}
}

// exitBox holds a command's exit status once done is closed.
type exitBox struct {
	done chan struct{}
	code int
}

// wait returns the exit status when the command ends within d.
func (e *exitBox) wait(d time.Duration) (int, bool) {
	select {
	case <-e.done:
		return e.code, true
	case <-time.After(d):
		return 0, false
	}
}

// emit writes one verdict: a JSON line, or text (the whole report the
// first time and when the verdict changes, one line otherwise).
func (wr *watchRun) emit(rep watch.Report, full bool) {
	if wr.json {
		wr.writeJSON(rep)
		return
	}
	// A new verdict, or a framework loaded since: the whole report again.
	key := string(rep.State)
	if len(rep.Findings) > 0 {
		key += "/" + rep.Findings[0].ID
	}
	for _, f := range rep.Frameworks {
		key += "/" + f.Name + ":" + f.Build
	}
	if full || key != wr.lastKey {
		wr.lastKey = key
		var b bytes.Buffer
		if full {
			_ = rep.WriteText(&b, wr.color)
		} else {
			b.WriteString(rep.Line() + "\n\n")
			_ = rep.WriteDetails(&b, wr.color)
		}
		b.WriteString("\n")
		wr.writeText(b.String())
		return
	}
	wr.writeText(rep.Line() + "\n")
}

// final writes the last report: the summary.
func (wr *watchRun) final(rep watch.Report) {
	if wr.json {
		wr.writeJSON(rep)
		return
	}
	if rep.Summary != nil {
		wr.writeText(rep.Summary.Text + "\n")
	}
}

func (wr *watchRun) writeJSON(rep watch.Report) {
	b, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintln(wr.env.Stderr, "watch: encoding the report:", err)
		return
	}
	wr.jsonOut.line(append(b, '\n'))
}

func (wr *watchRun) writeText(s string) {
	_, _ = io.WriteString(wr.text, s)
}

// command starts argv, passes its output through and watches it.
func (wr *watchRun) command(ctx context.Context, argv []string) int {
	wr.text, wr.color = wr.env.Stderr, wr.env.Terminal
	wr.jsonOut = &lineSync{w: wr.env.Stdout, atStart: true}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = wr.env.Stdin, wr.env.Stderr
	cmd.Stdout = wr.env.Stdout
	if wr.json {
		cmd.Stdout = wr.jsonOut // JSON lines only between the command's lines
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(wr.env.Stderr, "watch: cannot start %s: %v\n", argv[0], err)
		switch {
		case wr.once:
			return ExitUsage
		case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
			return 127
		}
		return 126
	}
	exited := make(chan int, 1)
	go func() { exited <- commandStatus(cmd, cmd.Wait()) }()
	// On Ctrl-C or SIGTERM the command gets time to stop by itself (the
	// terminal sent it the signal too), then SIGTERM, then SIGKILL; the
	// watch goes on until it has ended and then sums up.
	ex := &exitBox{done: make(chan struct{})}
	go func() {
		select {
		case ex.code = <-exited:
		case <-ctx.Done():
			ex.code = stopChild(cmd.Process, exited)
		}
		close(ex.done)
	}()
	w := watch.New(wr.options(), cmd.Process.Pid)
	defer w.Close()
	loopCtx := context.WithoutCancel(ctx)
	if err := w.Sample(loopCtx); err != nil {
		<-ex.done // it ended before it could be read
		wr.jsonOut.flush()
		fmt.Fprintf(wr.env.Stderr, "watch: %s ended with exit status %d before it could be watched\n", argv[0], ex.code)
		if wr.once {
			return ExitFailed
		}
		return ex.code
	}
	last := wr.loop(loopCtx, w, ex)
	<-ex.done // --once: the command runs to its end
	wr.jsonOut.flush()
	if wr.once {
		return stateExit(last)
	}
	return ex.code
}

// commandStatus is a finished command's exit status, as a shell gives it.
func commandStatus(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return ExitFailed
	}
	if sig, ok := signaled(cmd.ProcessState); ok {
		return 128 + sig
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return code
	}
	return ExitFailed
}

// stopChild gives a command watch started 3 s to stop by itself, then asks
// it to terminate, then kills it; it returns its exit status.
func stopChild(p *os.Process, exited <-chan int) int {
	select {
	case st := <-exited:
		return st
	case <-time.After(3 * time.Second):
	}
	_ = terminate(p)
	select {
	case st := <-exited:
		return st
	case <-time.After(10 * time.Second):
	}
	_ = p.Kill()
	return <-exited
}

// lineSync writes a command's output and watch's own lines to one stream,
// each of watch's lines at the start of a line: a line of watch waits
// while the command has written half a line. The command's bytes pass
// unchanged; only when its output ends without a newline is one added
// before watch's last lines.
type lineSync struct {
	mu      sync.Mutex
	w       io.Writer
	atStart bool
	pending [][]byte
}

// Write passes the command's output through.
func (s *lineSync) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if len(s.pending) > 0 {
		if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
			if _, err := s.w.Write(p[:i+1]); err != nil {
				return 0, err
			}
			s.atStart = true
			s.drain()
			n, err := s.w.Write(p[i+1:])
			if i+1 < len(p) {
				s.atStart = false
			}
			return i + 1 + n, err
		}
	}
	n, err := s.w.Write(p)
	s.atStart = p[len(p)-1] == '\n'
	return n, err
}

// line writes one of watch's lines now, or at the command's next newline.
func (s *lineSync) line(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.atStart && len(s.pending) == 0 {
		_, _ = s.w.Write(b)
		return
	}
	s.pending = append(s.pending, b)
}

func (s *lineSync) drain() {
	for _, b := range s.pending {
		_, _ = s.w.Write(b)
	}
	s.pending = nil
}

// flush writes what still waits, after the command's output has ended.
func (s *lineSync) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return
	}
	if !s.atStart {
		_, _ = s.w.Write([]byte{'\n'})
		s.atStart = true
	}
	s.drain()
}
