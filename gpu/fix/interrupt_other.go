//go:build !unix

package fix

import "os"

// interrupt stops a program; Windows has no interrupt to send to another
// process, so it is killed.
func interrupt(p *os.Process) error { return p.Kill() }
