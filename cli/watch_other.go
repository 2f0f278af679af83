//go:build !unix

package cli

import "os"

// terminate ends a process (no SIGTERM here).
func terminate(p *os.Process) error { return p.Kill() }

// signaled: no signals here.
func signaled(*os.ProcessState) (int, bool) { return 0, false }
