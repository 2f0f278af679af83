//go:build unix

package cli

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listenUnix serves a Unix socket in a temporary folder, like a display
// server's.
func listenUnix(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wayland-0")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return p
}

func TestFindDisplay(t *testing.T) {
	sock := listenUnix(t)
	tests := []struct {
		name string
		vars map[string]string
		want string // "" for no display; else a part of the answer
		why  string // a part of the error
	}{
		{"nothing set", nil, "", "DISPLAY and WAYLAND_DISPLAY are not set"},
		{"wayland socket answers", map[string]string{"WAYLAND_DISPLAY": sock}, "Wayland display", ""},
		{"wayland name under XDG_RUNTIME_DIR", map[string]string{"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": filepath.Dir(sock)}, "Wayland display wayland-0", ""},
		{"stale wayland", map[string]string{"WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": t.TempDir()}, "", "nothing answers"},
		{"stale X display", map[string]string{"DISPLAY": ":7391"}, "", "no X server answers on /tmp/.X11-unix/X7391"},
		{"bad display name", map[string]string{"DISPLAY": "nonsense"}, "", "not a display name"},
		{"stale wayland, then X also stale", map[string]string{"WAYLAND_DISPLAY": "/nonexistent/w", "DISPLAY": ":7392"}, "", "WAYLAND_DISPLAY=/nonexistent/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindDisplay(func(k string) string { return tt.vars[k] })
			if tt.want != "" {
				if err != nil || !strings.Contains(got, tt.want) {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrNoDisplay) || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("got %q, %v; want ErrNoDisplay with %q", got, err, tt.why)
			}
		})
	}
}

func TestXAddresses(t *testing.T) {
	tests := map[string]string{
		":0":              "unix /tmp/.X11-unix/X0",
		"unix:3.1":        "unix /tmp/.X11-unix/X3",
		"localhost:10.0":  "tcp localhost:6010",
		"[::1]:2":         "tcp ::1:6002",
		"example.org:1.0": "tcp example.org:6001",
	}
	for in, want := range tests {
		a, err := xAddresses(in)
		if err != nil || a[0][0]+" "+strings.Replace(a[0][1], "[::1]", "::1", 1) != want {
			t.Errorf("%s: %v %v, want %s", in, a, err, want)
		}
	}
	for _, bad := range []string{"", "x", ":", ":a", ":-1"} {
		if _, err := xAddresses(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestOpenWindow(t *testing.T) {
	sock := listenUnix(t)
	t.Run("no display", func(t *testing.T) {
		env, _, errb := fakeEnv(nil)
		env.Exec = func(string, []string, []string) error { t.Fatal("must not start the window"); return nil }
		if code := OpenWindow(env); code != ExitUsage {
			t.Fatalf("exit %d", code)
		}
		msg := errb.String()
		for _, want := range []string{"no display found", "gpuwizard doctor", "gpuwizard train"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
		if strings.Count(strings.TrimSpace(msg), "\n") > 5 || strings.Contains(msg, "goroutine") {
			t.Errorf("the message should be one short paragraph:\n%s", msg)
		}
	})
	t.Run("display but no window binary", func(t *testing.T) {
		env, _, errb := fakeEnv(map[string]string{"WAYLAND_DISPLAY": sock})
		env.Executable = filepath.Join(t.TempDir(), "gpuwizard")
		if code := OpenWindow(env); code != ExitUsage || !strings.Contains(errb.String(), "gpuwizard-gui is not installed") {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	})
	t.Run("window binary beside this one", func(t *testing.T) {
		dir := t.TempDir()
		gui := filepath.Join(dir, WindowBinary)
		if err := os.WriteFile(gui, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		env, _, _ := fakeEnv(map[string]string{"WAYLAND_DISPLAY": sock})
		env.Executable = filepath.Join(dir, "gpuwizard")
		var ran string
		env.Exec = func(path string, args, _ []string) error { ran = path; return nil }
		if code := OpenWindow(env); code != ExitOK || ran != gui {
			t.Fatalf("exit %d, ran %q; want %q", code, ran, gui)
		}
	})
	t.Run("window binary on PATH, its exit status passed on", func(t *testing.T) {
		env, _, _ := fakeEnv(map[string]string{"WAYLAND_DISPLAY": sock})
		env.Executable = filepath.Join(t.TempDir(), "gpuwizard")
		env.LookPath = func(name string) (string, error) { return "/opt/gw/" + name, nil }
		env.Exec = func(path string, _, _ []string) error {
			if path != "/opt/gw/gpuwizard-gui" {
				t.Errorf("ran %s", path)
			}
			return exitCode(3)
		}
		if code := OpenWindow(env); code != 3 {
			t.Fatalf("exit %d, want the window's 3", code)
		}
	})
}
