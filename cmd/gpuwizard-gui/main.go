// Command gpuwizard-gui is gpuwizard's window: the wizard that checks the
// machine, picks a dataset and trains on the GPU. The command-line binary
// (gpuwizard) starts it when run with no arguments on a desktop.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gpuwizard/app"
	"gpuwizard/cli"
)

func main() {
	if where, err := cli.FindDisplay(os.Getenv); err != nil {
		fmt.Fprintf(os.Stderr, "gpuwizard-gui: no display found, so the window cannot open (%s).\nOn a server or over SSH without X forwarding, use the command line instead: gpuwizard doctor, gpuwizard train, gpuwizard help.\n", cli.DisplayReason(err))
		os.Exit(cli.ExitUsage)
	} else if os.Getenv("GPUWIZARD_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "gpuwizard-gui: opening on", where)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpuwizard-gui:", err)
		os.Exit(cli.ExitFailed)
	}
}
