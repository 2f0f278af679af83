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
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return stdout.Bytes(), stderr.Bytes(), err
}
