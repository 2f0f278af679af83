package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu/nvml/nvmlfake"
	"gpuwizard/gpu/probe"
)

// fixEnv is a machine with eight A100s and no Python at all.
func fixEnv(t *testing.T) (Env, *bytes.Buffer, *bytes.Buffer) {
	env, out, errb := fakeEnv(nil)
	home := t.TempDir()
	env.Options = probe.Options{Root: t.TempDir(), NVML: nvmlfake.DGXA100(), Runner: noCommands{}, Timeout: time.Second,
		GOOS: "linux", GOARCH: "amd64", Home: home, Cwd: "/", Environ: map[string]string{"HOME": home}}
	return env, out, errb
}

func TestFixUsage(t *testing.T) {
	for _, args := range [][]string{{"fix", "somewhere"}, {"fix", "--undo", "--yes"}, {"fix", "--undo", "a", "b"}, {"fix", "--timeout", "0s"}} {
		env, _, errb := fixEnv(t)
		if code := Run(context.Background(), args, env); code != ExitUsage || errb.Len() == 0 {
			t.Errorf("%v: exit %d, %q", args, code, errb)
		}
	}
}

// Without a Python there is nothing to fix: a clear refusal, exit 1,
// nothing written.
func TestFixRefusesWithoutPython(t *testing.T) {
	env, out, errb := fixEnv(t)
	if code := Run(context.Background(), []string{"fix", "--yes"}, env); code != ExitFailed {
		t.Fatalf("exit %d: %s %s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "--python PATH") {
		t.Errorf("the refusal does not say what to do: %s", errb)
	}
	if _, err := os.Stat(filepath.Join(env.Options.Home, "gpuwizard")); err == nil {
		t.Error("a record folder was made for nothing")
	}
}

func TestFixUndoWithoutRecord(t *testing.T) {
	env, _, errb := fixEnv(t)
	if code := Run(context.Background(), []string{"fix", "--undo"}, env); code != ExitFailed || !strings.Contains(errb.String(), "nothing to undo") {
		t.Fatalf("exit %d: %s", code, errb)
	}
}
