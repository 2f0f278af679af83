//go:build !linux

package fleet

// OnSharedFS cannot tell a shared file system here: the binary is copied.
func OnSharedFS(path string) (bool, string) { return false, "" }
