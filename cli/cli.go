// Package cli is gpuwizard's headless face: the commands (doctor, train,
// predict, lint, bench), the live wiring between the doctor (gpu) and the
// trainer, and the launcher that opens the window binary. It imports no
// GUI toolkit, so the command-line binary links no OpenGL or X11 and
// starts on headless GPU servers.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/term"

	"gpuwizard/gpu/probe"
	"gpuwizard/gpu/watch"
	"gpuwizard/trainer"
)

// Exit codes shared by every command.
const (
	ExitOK       = 0
	ExitFailed   = 1 // the command ran and failed, or the machine is not ready
	ExitUsage    = 2 // bad flags or input
	ExitStopped  = 130
	ExitReady    = ExitOK     // doctor: ready for GPU training
	ExitNotReady = ExitFailed // doctor: not ready
)

// Env is what the commands need from outside: streams, the live machine
// (tests pass fakes) and the process's surroundings.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Color says whether Stdout is a terminal that shows colour.
	Color bool
	// Terminal says whether Stderr is a terminal (progress bars).
	Terminal bool
	// Columns is the width of the terminal on Stderr; nil or 0: 80.
	Columns func() int
	// Options are the doctor's probe options (tests pass a fake machine).
	Options probe.Options
	// Watch says which machine `watch` reads (tests pass a fake /proc and
	// NVML). The zero value is the live machine.
	Watch watch.Options
	// Probe asks the doctor about the GPU for the trainer; nil: unchecked.
	Probe trainer.DeviceProbe
	// Sample reads NVML while training on CUDA; nil: no proof sampling.
	Sample trainer.GPUSampler
	// RunIndex is the file `train` records its run folders in, so that
	// the window lists them (trainer.DefaultRunIndex); "": not recorded.
	RunIndex string
	// Getenv reads the environment (display detection). Nil: os.Getenv.
	Getenv func(string) string
	// Executable is this program's path. Empty: os.Executable.
	Executable string
	// LookPath finds a program on PATH. Nil: exec.LookPath.
	LookPath func(string) (string, error)
	// Exec replaces this process with another program. Nil: syscall.Exec
	// (Unix) or a child process whose exit code is returned.
	Exec func(path string, args, environ []string) error
	// LoadDetector loads a checkpoint for predict as a detector, nil, nil
	// when it holds a classifier. Nil: LoadDetector (tests pass a fake).
	LoadDetector func(path string) (Detector, error)
}

func (e Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

func (e Env) lookPath(name string) (string, error) {
	if e.LookPath != nil {
		return e.LookPath(name)
	}
	return exec.LookPath(name)
}

const usage = `gpuwizard: make deep-learning training use your NVIDIA GPU.

Usage:
  gpuwizard                  open the wizard window (runs gpuwizard-gui)
  gpuwizard doctor           check this machine's GPU, driver, CUDA and frameworks
  gpuwizard doctor --from F  diagnose a report pasted from another machine
  gpuwizard doctor --health  a fast check of the driver layer for Slurm's HealthCheckProgram
  gpuwizard fleet slurm      the doctor on every node of a cluster, in one table (also k8s, merge)
  gpuwizard fix              apply the doctor's wheel fixes to a Python environment (asks first; --undo)
  gpuwizard watch PID        where a running training really runs (GPU or CPU) and why
  gpuwizard watch -- CMD     start a training and watch it
  gpuwizard train            train a classifier (the built-in dataset by default)
  gpuwizard predict          classify images with a trained model
  gpuwizard export RUN       write a trained model as an ONNX file (or copy its run)
  gpuwizard lint PATH        check a dataset (folders, IDX, CIFAR-10, YOLO, COCO)
  gpuwizard bench            training speed on random data, in PyTorch's format
  gpuwizard version          version, commit and build details
  gpuwizard help             show this help

Run "gpuwizard COMMAND -h" (or "gpuwizard help COMMAND") for what a command
does, its flags, examples and exit status.
`

// Main runs gpuwizard with the live machine: the real NVML, the doctor as
// the trainer's device probe, and the process's streams.
func Main(ctx context.Context, args []string) int {
	sampler := probe.NewSampler(nil)
	defer sampler.Close()
	env := Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Color: IsTerminal(os.Stdout), Terminal: IsTerminal(os.Stderr),
		Columns: func() int { return terminalColumns(os.Stderr) },
		Probe:   LiveProbe, Sample: LiveSampler(sampler)}
	if idx, err := trainer.DefaultRunIndex(); err == nil {
		env.RunIndex = idx // no config folder: the runs are only not listed
	}
	return Run(ctx, args, env)
}

// Run dispatches args (without the program name) to a command and returns
// the exit code. No arguments opens the window when a display is there.
func Run(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		return OpenWindow(env)
	}
	switch args[0] {
	case "doctor":
		return Doctor(ctx, args[1:], env)
	case "train":
		return Train(ctx, args[1:], env)
	case "watch":
		return Watch(ctx, args[1:], env)
	case "predict":
		return Predict(ctx, args[1:], env)
	case "export":
		return Export(ctx, args[1:], env)
	case "bench":
		return Bench(ctx, args[1:], env)
	case "lint":
		return Lint(ctx, args[1:], env)
	case "fleet":
		return Fleet(ctx, args[1:], env)
	case "fix":
		return Fix(ctx, args[1:], env)
	case "version", "--version", "-version", "-v":
		return Version(args[1:], env)
	case "help", "-h", "--help", "-help":
		if len(args) == 2 && args[1] != "help" && !strings.HasPrefix(args[1], "-") {
			return Run(ctx, []string{args[1], "-h"}, env) // gpuwizard help train
		}
		fmt.Fprint(env.Stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "gpuwizard: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

// terminalColumns is the width of the terminal f is, 0 when unknown.
func terminalColumns(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// IsTerminal reports whether f is a character device that shows colour.
func IsTerminal(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
