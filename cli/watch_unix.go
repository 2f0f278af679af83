//go:build unix

package cli

import (
	"os"
	"syscall"
)

// terminate asks a process to end (SIGTERM).
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// signaled reports the signal that ended a process, if one did.
func signaled(ps *os.ProcessState) (int, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}
