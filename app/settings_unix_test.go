//go:build unix

package app

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
)

// TestLoadSettingsNeverBlocks: a named pipe chosen in Load settings… is
// refused without being opened (which would block the UI goroutine until
// something wrote to it), and the status says what it is.
func TestLoadSettingsNeverBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.yaml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	wz, loop := newTestWizard(t, Deps{PickFile: func(_ fyne.Window, done func(string)) { done(p) }})
	done := make(chan string, 1)
	go loop.do(func() {
		wz.settings.loadYAML()
		done <- wz.status.Text
	})
	select {
	case status := <-done:
		if !strings.Contains(status, p+" is a named pipe (FIFO)") {
			t.Errorf("status %q", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load settings… blocked opening the named pipe")
	}
}
