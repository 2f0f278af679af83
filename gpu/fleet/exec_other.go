//go:build !unix

package fleet

import "os/exec"

// askToStop keeps os/exec's cancellation (the process is killed) where
// there are no signals to ask with.
func askToStop(cmd *exec.Cmd) {}
