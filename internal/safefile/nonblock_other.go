//go:build !unix

package safefile

// nonBlock is not needed where named pipes are not files.
const nonBlock = 0
