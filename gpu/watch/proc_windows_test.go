//go:build windows

package watch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

// The Windows source reads real processes (under Wine too): this test
// binary starts itself as a child and watches it.

const childEnv = "GPUWIZARD_WATCH_CHILD"

// TestWindowsChildHelper is the child: it waits until its parent's test
// ends it (or 60 s).
func TestWindowsChildHelper(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("the child of TestWindowsSource")
	}
	time.Sleep(60 * time.Second)
}

// startChild starts this binary as the child with a command line and an
// environment to find again; it is killed by its PID when the test ends.
func startChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsChildHelper$", "--", "--epochs", "3", "--name", "two words")
	cmd.Env = append(os.Environ(), childEnv+"=1", "CUDA_VISIBLE_DEVICES=-1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	time.Sleep(500 * time.Millisecond) // its DLLs load
	return cmd
}

func TestWindowsSource(t *testing.T) {
	cmd := startChild(t)
	pid := cmd.Process.Pid
	src := newWinSource()
	table, err := src.table()
	if err != nil {
		t.Fatal(err)
	}
	if table[pid].PPID != os.Getpid() || !strings.HasSuffix(strings.ToLower(table[pid].Comm), ".exe") || table[os.Getpid()].Threads < 1 {
		t.Fatalf("table entry %+v (parent %+v)", table[pid], table[os.Getpid()])
	}
	pr, err := src.proc(pid)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-test.run=^TestWindowsChildHelper$", "--", "--epochs", "3", "--name", "two words"}
	if len(pr.Cmdline) != 7 || !slices.Equal(pr.Cmdline[1:], want) {
		t.Fatalf("command line %q", pr.Cmdline)
	}
	if since := time.Since(pr.Started); pr.Started.IsZero() || since < 0 || since > time.Minute {
		t.Fatalf("started %v (%s ago)", pr.Started, since)
	}
	env, err := src.environ(pid)
	if err != nil || env["CUDA_VISIBLE_DEVICES"] != "-1" || env[childEnv] != "1" {
		t.Fatalf("environment: %v (CUDA_VISIBLE_DEVICES=%q)", err, env["CUDA_VISIBLE_DEVICES"])
	}
	mods, err := src.modules(pid)
	if err != nil || !slices.ContainsFunc(mods, func(m string) bool { return strings.EqualFold(filepath.Base(m), "ntdll.dll") }) {
		t.Fatalf("modules %v: %q", err, mods)
	}
	exe, err := src.exe(pid)
	if err != nil || !strings.EqualFold(filepath.Base(exe), filepath.Base(os.Args[0])) {
		t.Fatalf("exe %q: %v", exe, err)
	}
	if kids := descendants(table, os.Getpid()); !slices.Contains(kids, pid) {
		t.Fatalf("children of %d: %v", os.Getpid(), kids)
	}
	if src.numCPU() < 1 || src.userName(pr) == "" {
		t.Fatalf("cpus %d user %q", src.numCPU(), src.userName(pr))
	}
	if !src.ownedBySelf(pr) || src.ownedBySelf(proc{PID: 1 << 30}) {
		t.Fatalf("owned by the watch's user: the child %v, no process %v", src.ownedBySelf(pr), src.ownedBySelf(proc{PID: 1 << 30}))
	}
	if _, err := src.proc(1 << 30); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("no such process: %v", err)
	}
}

// The watcher on Windows: the child is read, judged (not a training) and
// its CUDA_VISIBLE_DEVICES shown.
func TestWindowsWatch(t *testing.T) {
	cmd := startChild(t)
	opts := Options{NVML: nvmlfake.Failing(nvml.ErrorLibraryNotFound), Machine: func(context.Context, map[string]string) *gpu.Facts { return &gpu.Facts{} }}
	w := New(opts, cmd.Process.Pid)
	defer w.Close()
	ctx := context.Background()
	for range 3 {
		if err := w.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := w.Report(ctx)
	if !r.Alive || r.PID != cmd.Process.Pid || !strings.Contains(r.Command, "--name two words") || r.Environ["CUDA_VISIBLE_DEVICES"] != "-1" {
		t.Fatalf("report %+v", r)
	}
	if r.State != StateSettingUp && r.State != StateNotTraining {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if r.Interpreter != "" || !contains(r.Evidence, "process: PID") {
		t.Fatalf("interpreter %q evidence %q", r.Interpreter, r.Evidence)
	}
	if n := New(opts, 1<<30); n.Sample(ctx) == nil {
		t.Fatal("a PID that does not exist")
	}
}
