//go:build unix

package cli

import (
	"os"
	"syscall"
)

// execProgram replaces this process with path: the window then owns the
// terminal, the PID and the exit status.
func execProgram(path string, args, environ []string) error {
	return syscall.Exec(path, args, environ)
}

// executableFile says whether st is a file this system would run: a
// regular file with an execute bit.
func executableFile(st os.FileInfo) bool {
	return st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
