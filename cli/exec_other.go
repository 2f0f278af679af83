//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// execProgram runs path as a child and reports its exit status.
func execProgram(path string, args, environ []string) error {
	cmd := exec.Command(path, args[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = environ, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exitCode(ee.ExitCode())
	}
	return err
}
