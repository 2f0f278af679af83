//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A new file gets the mode any file the user makes gets (0644 less the
// umask), and a replaced file keeps its own. Permission bits are a Unix
// matter: Windows keeps only a read-only flag.
func TestWritePermissions(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	f, err := os.OpenFile(ref, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(ref)
	p := filepath.Join(dir, "args.yaml")
	if err := Write(nil, p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new file: %v, want %v", st.Mode().Perm(), want.Mode().Perm())
	}
	os.Chmod(p, 0o600)
	if err := Write(nil, p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced 0600 file: %v", st.Mode().Perm())
	}
}
