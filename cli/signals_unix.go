//go:build unix

package cli

import (
	"os"
	"syscall"
)

// stopSignals end a command the way Ctrl-C does (a training saves a
// resumable checkpoint and is listed as stopped): SIGINT (Ctrl-C), SIGTERM
// (kill, a job scheduler's time limit) and SIGHUP (the terminal or the SSH
// session is gone).
func stopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

// brokenPipeSignals are caught so that a write to a closed pipe (the
// reader of `gpuwizard train | tee log` died with the session) fails with
// EPIPE instead of killing the process before its checkpoint is saved.
func brokenPipeSignals() []os.Signal { return []os.Signal{syscall.SIGPIPE} }
