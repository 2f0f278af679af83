//go:build unix

package safefile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.bin")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct{ path, want string }{
		{fifo, "named pipe (FIFO)"},
		{zero, "(a link to /dev/zero) is a character device"},
		{sock, "is a socket"},
		{dir, "is a folder"},
	} {
		start := time.Now()
		_, err := ReadFile(c.path, 1<<20, "a test file")
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want %q and the name)", c.path, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s", c.path, d)
		}
		if _, _, err := Open(c.path); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open %s: %v", c.path, err)
		}
	}
}

func TestReadFileCap(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.yaml")
	os.WriteFile(p, make([]byte, 3<<20), 0o644)
	_, err := ReadFile(p, 1<<20, "a config file")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p+" is 3 MiB, more than the 1 MiB a config file may have") {
		t.Fatalf("too large: %v", err)
	}
	// A link to a regular file is followed.
	link := filepath.Join(dir, "link.yaml")
	os.WriteFile(filepath.Join(dir, "small.yaml"), []byte("epochs: 1\n"), 0o644)
	os.Symlink("small.yaml", link)
	b, err := ReadFile(link, 1<<20, "a config file")
	if err != nil || string(b) != "epochs: 1\n" {
		t.Fatalf("link to a regular file: %q %v", b, err)
	}
	b, err = ReadFile(filepath.Join(dir, "small.yaml"), 10, "x")
	if err != nil || len(b) != 10 {
		t.Fatalf("exactly the cap: %d %v", len(b), err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10, "x"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{10: "10 bytes", 2048: "2 KiB", 3 << 20: "3 MiB", 3<<29 + 0: "1.5 GiB", 1536 << 10: "1.5 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
