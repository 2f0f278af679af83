//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

// noFollow makes open(2) fail on a symbolic link (ELOOP).
const noFollow = syscall.O_NOFOLLOW

func isLinkRefused(err error) bool { return errors.Is(err, syscall.ELOOP) }
