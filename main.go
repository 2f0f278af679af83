// Command gpuwizard finds out why deep-learning training will not use an
// NVIDIA GPU, says how to fix it, and trains models on the GPU.
//
// Every command runs headless; this binary links no GUI toolkit, so it
// starts on servers without a display or OpenGL. With no arguments on a
// desktop it opens the window (gpuwizard-gui, in cmd/gpuwizard-gui).
package main

import (
	"os"

	"gpuwizard/cli"
)

func main() {
	// Ctrl-C, SIGTERM and SIGHUP stop a command cleanly (cli.NotifyStop).
	os.Exit(cli.Execute(os.Args[1:]))
}
