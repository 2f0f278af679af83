package cli

import (
	"bytes"
	"context"
	"errors"
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
	for _, want := range []string{"gpuwizard ", "built with go", "window: " + WindowBinary + " not found"} {
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
	for _, cmd := range []string{"doctor", "train", "watch", "predict", "lint", "bench", "version", "fix"} {
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
