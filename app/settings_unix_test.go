//go:build unix

package app

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gpuwizard/trainer"
)

// TestPlainYAMLErrorNeverBlocks: a named pipe chosen in Load settings… is
// refused by the loader, and explaining that error does not open the pipe
// (which would block the UI goroutine until something wrote to it).
func TestPlainYAMLErrorNeverBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.yaml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := trainer.LoadConfigFile(p, trainer.Defaults())
	if err == nil {
		t.Fatal("a named pipe was loaded as settings")
	}
	done := make(chan string, 1)
	go func() { done <- plainYAMLError(p, err) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("plainYAMLError blocked opening the named pipe")
	}
}
