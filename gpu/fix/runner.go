package fix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Runner runs the plan's programs. Tests and the window pass their own.
type Runner interface {
	// Output runs args and returns its standard output (pip freeze).
	Output(ctx context.Context, args []string) ([]byte, error)
	// Run runs args, giving line each line it writes (standard output and
	// error together) as it comes; ctx ending stops it.
	Run(ctx context.Context, args []string, line func(string)) error
}

// ExecRunner runs programs with os/exec. A cancelled run is first asked to
// stop (an interrupt, so pip rolls back what it began), and killed after
// Grace.
type ExecRunner struct {
	// Environ is the programs' environment; nil: this process's, with pip
	// told not to prompt nor look for its own upgrades.
	Environ []string
	// Grace is how long a cancelled program has to stop; 0: 20 s.
	Grace time.Duration
}

// pipQuiet keeps pip from asking questions or checking for its own update.
var pipQuiet = []string{"PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONUNBUFFERED=1"}

func (r ExecRunner) command(ctx context.Context, args []string) (*exec.Cmd, error) {
	if len(args) == 0 {
		return nil, errors.New("fix: an empty command")
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = r.Environ
	if cmd.Env == nil {
		cmd.Env = append(os.Environ(), pipQuiet...)
	}
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = r.Grace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 20 * time.Second
	}
	return cmd, nil
}

// Output implements Runner.
func (r ExecRunner) Output(ctx context.Context, args []string) ([]byte, error) {
	cmd, err := r.command(ctx, args)
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w%s", Command{Args: args}, err, tail(stderr.String()))
	}
	return out, nil
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, args []string, line func(string)) error {
	cmd, err := r.command(ctx, args)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		last := ""
		for sc.Scan() {
			last = sc.Text()
			if line != nil {
				line(last)
			}
		}
		io.Copy(io.Discard, pr) // a line past the buffer: keep the program unblocked
		done <- last
	}()
	err = cmd.Run()
	pw.Close()
	last := <-done
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: stopped (%w)", Command{Args: args}, ctx.Err())
	case err != nil && last != "":
		return fmt.Errorf("%s: %w; its last line: %s", Command{Args: args}, err, last)
	case err != nil:
		return fmt.Errorf("%s: %w", Command{Args: args}, err)
	}
	return nil
}

// tail is the end of a program's error output, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return ": " + s
}
