package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// noWindowHelp follows the reason why no window opens.
const noWindowHelp = `Use the commands instead (they need no display):
  gpuwizard doctor           check the GPU, driver, CUDA and Python frameworks
  gpuwizard train            train a model (--device cuda insists on the GPU)
  gpuwizard help             every command
`

// FindWindowBinary looks for gpuwizard-gui beside the executable, then on
// PATH.
func FindWindowBinary(env Env) (string, bool) {
	self := env.Executable
	if self == "" {
		self, _ = os.Executable()
	}
	if self != "" {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), WindowBinary)
		if st, err := os.Stat(p); err == nil && runnable(st.Mode()) {
			return p, true
		}
	}
	if p, err := env.lookPath(WindowBinary); err == nil {
		return p, true
	}
	return "", false
}

// OpenWindow replaces this process with the window binary when a display
// answers; otherwise it says why no window opens and what to run instead,
// and returns ExitUsage.
func OpenWindow(env Env) int {
	if _, err := FindDisplay(env.getenv); err != nil {
		fmt.Fprintf(env.Stderr, "gpuwizard: no display found, so the window cannot open (%s).\n%s", DisplayReason(err), noWindowHelp)
		return ExitUsage
	}
	bin, ok := FindWindowBinary(env)
	if !ok {
		fmt.Fprintf(env.Stderr, "gpuwizard: the window program %s is not installed beside this one or on PATH (install both with make install).\n%s", WindowBinary, noWindowHelp)
		return ExitUsage
	}
	run := env.Exec
	if run == nil {
		run = execProgram
	}
	if err := run(bin, []string{bin}, os.Environ()); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			return int(code)
		}
		fmt.Fprintf(env.Stderr, "gpuwizard: starting %s: %v\n%s", bin, err, noWindowHelp)
		return ExitFailed
	}
	return ExitOK
}

// DisplayReason is FindDisplay's error without ErrNoDisplay's own words.
func DisplayReason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrNoDisplay.Error()+": ")
}

// exitCode is a child's exit status, for systems without exec.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }
