//go:build !windows

package fleet

// kubectlLocal is how kubectl cp is told the local file path: as it is.
func kubectlLocal(path string) (string, error) { return path, nil }
