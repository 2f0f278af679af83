//go:build unix

package fix

import "os"

// interrupt asks a program to stop the way Ctrl-C does, so that pip can
// roll back an install it began.
func interrupt(p *os.Process) error { return p.Signal(os.Interrupt) }
