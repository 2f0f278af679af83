package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

type fullFile struct{ *os.File }

func (fullFile) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

type fullFS struct{ OS }

func (fullFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	return fullFile{f}, err
}

func TestWriteReplacesOrKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := Write(nil, p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(nil, p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	err := Write(fullFS{}, p, []byte("three"))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "previous version is kept") {
		t.Fatalf("full disk: %v", err)
	}
	b, _ := os.ReadFile(p)
	ents, _ := os.ReadDir(dir)
	if string(b) != "two" || len(ents) != 1 {
		t.Fatalf("content %q, %d files", b, len(ents))
	}
	if err := Write(nil, filepath.Join(dir, "no", "such", "f"), nil); err == nil {
		t.Fatal("a missing folder must fail")
	}
}
