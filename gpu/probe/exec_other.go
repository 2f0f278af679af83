//go:build !unix

package probe

import "os/exec"

// ownGroup leaves cmd as it is where there are no process groups.
func ownGroup(cmd *exec.Cmd) {}

// killGroup has no group to kill where there are no process groups.
func killGroup(cmd *exec.Cmd) error { return nil }

// hostExecBits: this host keeps no execute bits (Windows), so every
// regular file of a fake Unix root read here counts as a command.
const hostExecBits = false
