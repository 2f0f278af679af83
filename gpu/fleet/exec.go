package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Runner runs a command (srun, sinfo, kubectl) and returns what it wrote
// on its standard output and error. Tests pass recorded answers; the live
// machine uses ExecRunner.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error)
}

// ExecRunner runs commands with os/exec. When ctx ends the command is
// asked to stop (SIGTERM where there are signals: srun then cancels its
// job step on the node), and killed StopDelay later.
type ExecRunner struct {
	Env []string // environment of the child; nil inherits
	// StopDelay is how long a command asked to stop has before it is
	// killed. Zero: 5 s.
	StopDelay time.Duration
}

var _ Runner = ExecRunner{}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.Env
	askToStop(cmd)
	cmd.WaitDelay = r.StopDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	stdout := &headWriter{max: MaxReport}
	stderr := &tailWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return stdout.b.Bytes(), stderr.b, err
}

// headWriter keeps the first max bytes written to it and drops the rest
// (a node that prints without end cannot fill this machine's memory; a
// report cut short is then garbage, as it should be).
type headWriter struct {
	b   bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tailWriter keeps the last max bytes or so written to it: the error
// messages at the end of a long standard error.
type tailWriter struct {
	b   []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 2*w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}
