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
	"strconv"
	"time"

	"gpuwizard/gpu/watch"
	"gpuwizard/internal/printable"
)

// watchHelp is the help of `gpuwizard watch`.
func watchHelp() help {
	return help{
		usage: `Usage: gpuwizard watch [flags] PID
       gpuwizard watch [flags] -- COMMAND [ARGS...]`,
		about: `Says where a running training really runs: on which NVIDIA GPU and how busy,
or on the CPU and why (a CPU-only build, CUDA_VISIBLE_DEVICES, the command
line, a model never moved to the GPU, no usable GPU, a GPU starved by data
loading), or that it is still setting up, idle, or not a training. It follows
the process and its children (DataLoader workers, torchrun ranks; a worker's
or a rank's PID leads to the training's main process) through NVML, the
process table (CPU use, loaded libraries, GPU device files, environment, read
again when the process execs), the cgroup's CPU limit and the doctor. In a
container, under WSL 2 and with MIG, where NVML cannot name the process, its
GPU device files stand in and the report says what could not be seen.

With -- COMMAND it starts the command and passes its output through; watch
writes its own text to standard error. With --json, standard output holds
only watch's JSON lines (the command's standard output goes to standard
error).
`,
		examples: `  gpuwizard watch 12345
  gpuwizard watch --once --json 12345
  gpuwizard watch --once -- torchrun --nproc-per-node=2 train.py
  gpuwizard watch -- python train.py --epochs 10
`,
		exit: `0 on a GPU (busy, or idle holding GPU memory); 1 on the CPU, starved,
setting up, idle without GPU memory, not a training, unreadable, or ended
without a verdict on a GPU; 2 usage error. For -- COMMAND without --once: the
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
		once     = fs.Bool("once", false, "give one verdict once the state settles, then exit (PID) or let the command run to its end quietly")
		window   = fs.Duration("window", 90*time.Second, "with --once: the longest wait for the state to settle (the same verdict for 2s, not setting up); the verdict comes as soon as it settles")
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
	if !watch.Supported() && env.Watch.Root == "" && env.Watch.FS == nil {
		fmt.Fprintln(env.Stderr, "watch: this system's processes cannot be read (Linux and Windows only); run gpuwizard doctor instead")
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
		fmt.Fprintf(env.Stderr, "watch: %q is not a process ID (to start a command, put it after --: gpuwizard watch -- %s)\n", rest[0], printable.String(rest[0]))
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
	jsonOut  io.Writer // JSON lines: standard output, watch's alone
	lastKey  string
}

func (wr *watchRun) options() watch.Options {
	o := wr.env.Watch
	o.Window = max(10*time.Second, 2*wr.interval)
	if wr.once {
		o.Window = min(10*time.Second, max(wr.window, time.Second))
	}
	return o
}

// step is the time between readings: a verdict rests on several, and
// --once gives its verdict as soon as they agree.
func (wr *watchRun) step() time.Duration {
	if wr.once {
		return min(max(wr.window/10, 50*time.Millisecond), 500*time.Millisecond)
	}
	return min(max(wr.interval/2, 50*time.Millisecond), time.Second)
}

// settleSpan is how long --once's verdict must hold: 2 s, less in a
// shorter window.
func (wr *watchRun) settleSpan() time.Duration { return min(2*time.Second, wr.window/2) }

// pid watches a process that is already running.
func (wr *watchRun) pid(ctx context.Context, pid int) int {
	wr.text, wr.color = wr.env.Stdout, wr.env.Color
	wr.jsonOut = wr.env.Stdout
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
	if led := w.PID(); led != pid && !wr.json {
		wr.writeText(fmt.Sprintf("PID %d belongs to the training of PID %d (a DataLoader worker or a rank): watching %d and its children.\n\n", pid, led, led))
	}
	last := wr.loop(ctx, w, nil)
	return stateExit(last)
}

// verdict is the state a watch ended on and whether it was on a GPU.
type verdict struct {
	state watch.State
	onGPU bool
}

// stateExit is the exit status of a verdict: 0 only on a GPU (busy, or
// idle holding its memory).
func stateExit(v verdict) int {
	if v.state == watch.StateGPU || v.state == watch.StateIdle && v.onGPU {
		return ExitOK
	}
	return ExitFailed
}

// loop samples, reports every interval (or once, when the verdict has
// settled or the window has passed), and ends with a summary when the
// process ends or ctx is cancelled. For a command watch started, ex is
// closed when it has ended, with its exit status. It returns the last
// verdict the process was judged in while it ran.
func (wr *watchRun) loop(ctx context.Context, w *watch.Watcher, ex *exitBox) verdict {
	var exited <-chan struct{}
	if ex != nil {
		exited = ex.done
	}
	start := time.Now()
	next := start.Add(wr.interval)
	settler := watch.Settler{Span: wr.settleSpan()}
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
			return verdict{rep.Summary.LastState, rep.Summary.LastOnGPU}
		}
		now := time.Now()
		switch {
		case wr.once:
			rep := w.Report(ctx)
			settled := settler.Add(rep)
			if settled || now.Sub(start) >= wr.window {
				rep.Settled = &settled
				wr.emit(rep, true)
				return verdict{rep.State, rep.OnGPU}
			}
		case !now.Before(next):
			wr.emit(w.Report(ctx), false)
			for !next.After(now) {
				next = next.Add(wr.interval) // on the interval's beat, however long a report took
			}
		}
		select {
		case <-ctx.Done():
			rep := w.Report(context.WithoutCancel(ctx))
			s := w.Summary()
			rep.Final, rep.Summary = true, &s
			wr.final(rep)
			return verdict{s.LastState, s.LastOnGPU}
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
			if rep.Settled != nil && !*rep.Settled {
				fmt.Fprintf(&b, "\nThe state did not settle within %s (the verdict above is the last one); watch longer with --window.\n", wr.window)
			}
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
	_, _ = wr.jsonOut.Write(append(b, '\n'))
}

func (wr *watchRun) writeText(s string) {
	_, _ = io.WriteString(wr.text, s)
}

// command starts argv, passes its output through and watches it. With
// --json the command's standard output goes to standard error: standard
// output holds watch's JSON lines alone.
func (wr *watchRun) command(ctx context.Context, argv []string) int {
	wr.text, wr.color = wr.env.Stderr, wr.env.Terminal
	wr.jsonOut = wr.env.Stdout
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = wr.env.Stdin, wr.env.Stdout, wr.env.Stderr
	if wr.json {
		cmd.Stdout = wr.env.Stderr
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(wr.env.Stderr, "watch: cannot start %s: %s\n", printable.String(argv[0]), printable.String(err.Error()))
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
	w.SetCommand(argv)
	loopCtx := context.WithoutCancel(ctx)
	if err := w.Sample(loopCtx); err != nil {
		<-ex.done // it ended before it could be read
		fmt.Fprintf(wr.env.Stderr, "watch: %s ended with exit status %d before it could be watched\n", argv[0], ex.code)
		if wr.once {
			return ExitFailed
		}
		return ex.code
	}
	last := wr.loop(loopCtx, w, ex)
	<-ex.done // --once: the command runs to its end
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
