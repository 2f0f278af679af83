// Command gpuwizard finds out why deep-learning training will not use an
// NVIDIA GPU, says how to fix it, and trains models on the GPU.
//
// With no arguments it opens the wizard window. Subcommands run headless.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gpuwizard/app"
	"gpuwizard/gpu"
	"gpuwizard/gpu/doctorcmd"
	"gpuwizard/trainer/traincmd"
)

const usage = `gpuwizard: make deep-learning training use your NVIDIA GPU.

Usage:
  gpuwizard                  open the wizard window
  gpuwizard doctor           check this machine's GPU, driver, CUDA and frameworks
  gpuwizard doctor --from F  diagnose a report pasted from another machine
  gpuwizard train            train a classifier (the built-in dataset by default)
  gpuwizard predict          classify images with a trained model
  gpuwizard lint PATH        check a dataset (folders, IDX, CIFAR-10, YOLO, COCO)
  gpuwizard bench            training speed on random data, in PyTorch's format
  gpuwizard help             show this help

Run "gpuwizard COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		if err := app.Run(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "gpuwizard:", err)
			return 1
		}
		return 0
	}
	sampler := gpu.NewSampler(nil)
	defer sampler.Close()
	tenv := traincmd.Env{Stdout: os.Stdout, Stderr: os.Stderr, Terminal: isTerminal(os.Stderr), Probe: app.LiveProbe,
		Sample: app.LiveSampler(sampler)}
	switch args[0] {
	case "doctor":
		return doctorcmd.Run(ctx, args[1:], doctorcmd.Env{
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Color: isTerminal(os.Stdout),
		})
	case "train":
		return traincmd.Train(ctx, args[1:], tenv)
	case "predict":
		return traincmd.Predict(ctx, args[1:], tenv)
	case "bench":
		return traincmd.Bench(ctx, args[1:], tenv)
	case "lint":
		return traincmd.Lint(ctx, args[1:], tenv)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "gpuwizard: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// isTerminal reports whether f is a character device that shows colour.
func isTerminal(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
