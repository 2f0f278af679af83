//go:build !unix

package cli

import (
	"os"
	"syscall"
)

// stopSignals end a command the way Ctrl-C does.
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// brokenPipeSignals: a closed pipe is not a signal here.
func brokenPipeSignals() []os.Signal { return nil }
