package cli

import (
	"context"
	"os"
	"os/signal"
)

// Execute runs gpuwizard as the program (main calls it): Main under a
// context that the stop signals end, with broken pipes made errors.
func Execute(args []string) int {
	ctx, stop := NotifyStop(context.Background())
	defer stop()
	return Main(ctx, args)
}

// NotifyStop returns a context that ends on the first stop signal (Ctrl-C,
// SIGTERM and, on Unix, SIGHUP: a dropped SSH session stops a training as
// Ctrl-C does, with a resumable checkpoint), and catches SIGPIPE until stop
// is called: once the terminal or the pipe reading the output is gone, a
// write fails with an error that the commands ignore, so the checkpoint is
// still saved. Catching it (rather than ignoring it) leaves the default in
// the programs that gpuwizard starts.
func NotifyStop(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	pipe := make(chan os.Signal, 1) // never read: a caught SIGPIPE is dropped
	if sigs := brokenPipeSignals(); len(sigs) > 0 {
		signal.Notify(pipe, sigs...)
	}
	ctx, stopCtx := signal.NotifyContext(parent, stopSignals()...)
	return ctx, func() {
		stopCtx()
		signal.Stop(pipe)
	}
}
