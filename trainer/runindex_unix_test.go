//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package trainer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunIndexNamedPipe: an index that is a named pipe is refused at once
// (reading it would block the listing forever), and the next record
// replaces it.
func TestRunIndexNamedPipe(t *testing.T) {
	index := filepath.Join(t.TempDir(), RunIndexFile)
	if err := syscall.Mkfifo(index, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ListIndexedRuns(index, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrRunIndex) {
			t.Fatalf("a named pipe as the index: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listing blocked on a named pipe")
	}
	run := fakeRun(t, t.TempDir(), "train")
	if err := RecordRun(index, run); err != nil {
		t.Fatal(err)
	}
	if dirs, err := IndexedRunDirs(index); err != nil || len(dirs) != 1 || dirs[0] != run {
		t.Fatalf("after a record: %q %v", dirs, err)
	}
}

// TestRunIndexLinkToDevice: an index that is a link to /dev/zero (endless
// bytes) is refused as an error naming it, not read without end, and the
// next record replaces it. (Windows has no such device file.)
func TestRunIndexLinkToDevice(t *testing.T) {
	index := filepath.Join(t.TempDir(), RunIndexFile)
	if err := os.Symlink("/dev/zero", index); err != nil {
		t.Fatal(err)
	}
	runs, err := ListIndexedRuns(index, nil)
	if !errors.Is(err, ErrRunIndex) || !strings.Contains(err.Error(), index) || len(runs) != 0 {
		t.Fatalf("a link to /dev/zero as the index: %d runs, %v", len(runs), err)
	}
	fresh := fakeRun(t, t.TempDir(), "fresh")
	if err := RecordRun(index, fresh); err != nil {
		t.Fatalf("record over it: %v", err)
	}
	if dirs, err := IndexedRunDirs(index); err != nil || len(dirs) != 1 || dirs[0] != fresh {
		t.Fatalf("after a record: %q %v", dirs, err)
	}
}
