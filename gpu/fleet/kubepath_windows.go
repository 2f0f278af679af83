package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kubectlLocal is how kubectl cp is told the local file path on Windows.
// kubectl splits its arguments at the first ':' into pod and path, so
// C:\Users\ada\gpuwizard is read as pod "C" (kubernetes/kubectl#1225,
// kubernetes/kubernetes#101985): the path is given without its drive
// letter, which kubectl then reads on the current drive, or relative to
// the current folder for a share.
func kubectlLocal(path string) (string, error) {
	vol := filepath.VolumeName(path)
	if vol == "" {
		return path, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the current folder for kubectl cp: %w", err)
	}
	if strings.EqualFold(filepath.VolumeName(cwd), vol) && len(vol) == 2 {
		return path[len(vol):], nil
	}
	rel, err := filepath.Rel(cwd, path)
	if err != nil || strings.Contains(rel, ":") {
		return "", fmt.Errorf("kubectl cp cannot copy %s from another drive than the current one (%s): run gpuwizard fleet from %s", path, cwd, vol)
	}
	return rel, nil
}
