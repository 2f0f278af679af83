//go:build unix

package probe

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group: a probe that times out (nvcc calling
// a hung driver, a Python that spawns workers) leaves no child behind.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills every process left in cmd's group: after the command
// ended, the children it started (a daemon of nvcc's, a sleeping
// grandchild holding its output pipe) would otherwise outlive it. The
// group is gone (ESRCH) when none is left; that is not an error.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// hostExecBits: this host keeps execute bits, so a fake Unix root's
// commands are told from its other files by them.
const hostExecBits = true
