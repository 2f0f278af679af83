//go:build unix

package cli

import "syscall"

// execProgram replaces this process with path: the window then owns the
// terminal, the PID and the exit status.
func execProgram(path string, args, environ []string) error {
	return syscall.Exec(path, args, environ)
}
