// Command gpuwizard finds out why deep-learning training will not use an
// NVIDIA GPU, says how to fix it, and trains models on the GPU.
//
// Every command runs headless; this binary links no GUI toolkit, so it
// starts on servers without a display or OpenGL. With no arguments on a
// desktop it opens the window (gpuwizard-gui, in cmd/gpuwizard-gui).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"gpuwizard/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
