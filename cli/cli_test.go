package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEnv is a process surrounding: environment variables, no PATH.
func fakeEnv(vars map[string]string) (Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return Env{Stdout: &out, Stderr: &errb,
		Getenv:   func(k string) string { return vars[k] },
		LookPath: func(string) (string, error) { return "", errors.New("not on PATH") },
	}, &out, &errb
}

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

func TestRunDispatch(t *testing.T) {
	env, out, errb := fakeEnv(nil)
	if code := Run(context.Background(), []string{"help"}, env); code != ExitOK || !strings.Contains(out.String(), "gpuwizard doctor") {
		t.Fatalf("help: %d %s", code, out)
	}
	if code := Run(context.Background(), []string{"frobnicate"}, env); code != ExitUsage || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown: %d %s", code, errb)
	}
	out.Reset()
	env.Executable = filepath.Join(t.TempDir(), "gpuwizard")
	if code := Run(context.Background(), []string{"--version"}, env); code != ExitOK {
		t.Fatalf("version: %d", code)
	}
	v := out.String()
	for _, want := range []string{"gpuwizard ", "built with go", "window: gpuwizard-gui not found"} {
		if !strings.Contains(v, want) {
			t.Errorf("version lacks %q:\n%s", want, v)
		}
	}
}

func TestBuildStampString(t *testing.T) {
	b := BuildStamp{Version: "v1.2.3", Commit: "0123456789abcdef", Time: "2026-11-23T09:00:00Z", Modified: true}
	if got, want := b.String(), "gpuwizard v1.2.3 (commit 0123456789ab, 2026-11-23T09:00:00Z, with uncommitted changes)"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// Every command's -h and --help print its help (what it does, usage,
// examples, flags, exit status) on standard output and exit 0; a wrong
// flag says so with the help on standard error and exits 2.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, cmd := range []string{"doctor", "train", "watch", "predict", "lint", "bench", "version"} {
		for _, args := range [][]string{{cmd, "-h"}, {cmd, "--help"}, {"help", cmd}} {
			env, out, errb := fakeEnv(nil)
			code := Run(context.Background(), args, env)
			help := out.String()
			if code != ExitOK || errb.Len() != 0 {
				t.Errorf("%v: exit %d, stderr %q", args, code, errb)
			}
			for _, want := range []string{"Usage: gpuwizard " + cmd, "\nExamples:\n  gpuwizard ", "\nFlags:\n", "\nExit status: 0"} {
				if !strings.Contains(help, want) {
					t.Errorf("%v: the help lacks %q:\n%s", args, want, help)
				}
			}
			if paragraph := strings.SplitN(help, "\n\n", 3); len(paragraph) < 3 || len(paragraph[1]) < 60 {
				t.Errorf("%v: no paragraph saying what %s does:\n%s", args, cmd, help)
			}
		}
		env, out, errb := fakeEnv(nil)
		if code := Run(context.Background(), []string{cmd, "--no-such-flag"}, env); code != ExitUsage || out.Len() != 0 ||
			!strings.Contains(errb.String(), "flag provided but not defined: -no-such-flag") || !strings.Contains(errb.String(), "Usage: gpuwizard "+cmd) {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q", cmd, code, out, errb)
		}
	}
}
