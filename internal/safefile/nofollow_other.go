//go:build !unix

package safefile

// noFollow: without O_NOFOLLOW, OpenNoFollow relies on its Lstat before
// the open and the same-file check after it.
const noFollow = 0

func isLinkRefused(error) bool { return false }
