package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goList runs `go list -deps` over pkgs and returns the import paths.
func goList(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-tags", "migrated_fynedo", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// TestArrows guards the layout: the command-line binary links no GUI
// toolkit, the domain packages never reach the faces, and only the
// window's main imports app.
func TestArrows(t *testing.T) {
	rules := []struct {
		pkgs      []string
		forbidden []string
	}{
		{[]string{"."}, []string{"fyne.io/", "github.com/go-gl/", "gpuwizard/app"}},
		{[]string{"./trainer/..."}, []string{"gpuwizard/gpu", "gpuwizard/cli", "gpuwizard/app", "fyne.io/"}},
		{[]string{"./gpu/..."}, []string{"gpuwizard/trainer", "gpuwizard/cli", "gpuwizard/app", "fyne.io/"}},
		{[]string{"./cli/..."}, []string{"gpuwizard/app", "fyne.io/"}},
	}
	for _, r := range rules {
		for _, dep := range goList(t, r.pkgs...) {
			for _, bad := range r.forbidden {
				if strings.HasPrefix(dep, bad) {
					t.Errorf("%v depends on %s", r.pkgs, dep)
				}
			}
		}
	}
}

// TestHeadlessBinary builds the command-line binary and runs it as a
// headless server would: it links no GL or X11 library, and without a
// display it says so in a paragraph and exits 2, with no stack trace.
func TestHeadlessBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gpuwizard")
	if out, err := exec.Command("go", "build", "-tags", "migrated_fynedo", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ldd, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("ldd: %v\n%s", err, ldd)
	}
	for _, lib := range []string{"libGL.", "libGLX", "libEGL", "libX11", "libxcb", "libXcursor", "libXrandr"} {
		if strings.Contains(string(ldd), lib) {
			t.Errorf("the command-line binary links %s:\n%s", lib, ldd)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("no display: %v, want exit status 2\n%s", err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, "no display found") || !strings.Contains(msg, "gpuwizard doctor") || strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Fatalf("no display: unexpected message:\n%s", msg)
	}
	cmd = exec.Command(bin, "version")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "built with go") {
		t.Fatalf("version: %v\n%s", err, out)
	}
}
