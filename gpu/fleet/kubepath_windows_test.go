package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlLocal: kubectl cp is never given a drive letter (it would
// read "C" as a pod); another drive than the current one is refused with
// the way out.
func TestKubectlLocal(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(cwd, "bin", "gpuwizard")
	got, err := kubectlLocal(p)
	if err != nil || strings.Contains(got, ":") || !strings.HasSuffix(got, `\bin\gpuwizard`) {
		t.Errorf("kubectlLocal(%q) = %q, %v", p, got, err)
	}
	other := "Q:\\tools\\gpuwizard"
	if strings.EqualFold(filepath.VolumeName(cwd), "Q:") {
		other = "R:\\tools\\gpuwizard"
	}
	if got, err := kubectlLocal(other); err == nil || !strings.Contains(err.Error(), "another drive") {
		t.Errorf("kubectlLocal(%q) = %q, %v: want the other drive refused", other, got, err)
	}
	if got, err := kubectlLocal(`bin\gpuwizard`); err != nil || got != `bin\gpuwizard` {
		t.Errorf("a relative path: %q, %v", got, err)
	}
}
