package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindWindowBinaryBeside: the window program beside this one is found
// by the platform's name (gpuwizard-gui, gpuwizard-gui.exe).
func TestFindWindowBinaryBeside(t *testing.T) {
	dir := t.TempDir()
	env, _, _ := fakeEnv(nil)
	env.Executable = filepath.Join(dir, "gpuwizard")
	if p, ok := FindWindowBinary(env); ok {
		t.Fatalf("found %q in an empty folder", p)
	}
	gui := filepath.Join(dir, WindowBinary)
	if err := os.WriteFile(gui, []byte("window"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, ok := FindWindowBinary(env); !ok || p != gui {
		t.Fatalf("FindWindowBinary = %q, %v; want %q", p, ok, gui)
	}
}
