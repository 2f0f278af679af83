//go:build unix

package safefile

import "syscall"

// nonBlock opens named pipes without waiting for a writer.
const nonBlock = syscall.O_NONBLOCK
