//go:build !unix

package cli

import "testing"

// TestFindDisplayWindows: on Windows the desktop is always there, whatever
// DISPLAY and WAYLAND_DISPLAY say.
func TestFindDisplayWindows(t *testing.T) {
	got, err := FindDisplay(func(string) string { return "" })
	if err != nil || got == "" {
		t.Fatalf("FindDisplay: %q, %v; want the desktop", got, err)
	}
}
