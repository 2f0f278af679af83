//go:build unix

package fleet

import (
	"os/exec"
	"syscall"
)

// askToStop makes the cancellation of cmd a SIGTERM, which srun and
// kubectl handle (srun cancels its job step), instead of a SIGKILL.
func askToStop(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
}
