//go:build unix

package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

// readPID reads a PID a test script wrote.
func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// ended reports whether pid is gone or a zombie (killed, waiting for its
// new parent to reap it).
func ended(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(st), ") Z ")
}

// mustEnd fails unless pid has ended within a moment (a SIGKILL is
// delivered at once, but the process takes a few milliseconds to die); it
// kills a survivor so that the test leaves nothing behind.
func mustEnd(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(300 * time.Millisecond)
	for !ended(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (PID %d) still runs after Run returned", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A command that times out is killed with every process it started.
func TestExecRunnerKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := ExecRunner{}.Run(ctx, "sh", "-c", "sleep 30 & echo $! > "+pidFile+"; wait")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want a timeout, got %v", err)
	}
	mustEnd(t, readPID(t, pidFile), "the command's child")
}

// A command that answers at once but leaves a child behind holding its
// output pipe (nvcc's wrapper starting a daemon) returns its output within
// the wait delay, and the child is killed.
func TestExecRunnerKillsWhatTheCommandLeft(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	start := time.Now()
	out, err := ExecRunner{}.Run(context.Background(), "sh", "-c", "sleep 30 & echo $! > "+pidFile+"; echo release 12.4")
	if took := time.Since(start); took > 5*waitDelay {
		t.Errorf("Run took %s: it waited for the child's pipe", took)
	}
	if !strings.Contains(string(out), "release 12.4") {
		t.Errorf("output %q, err %v", out, err)
	}
	mustEnd(t, readPID(t, pidFile), "the command's child")
}

// Probe returns only when the commands of the sources that timed out have
// been killed and reaped: a hung nvcc and the child it started do not
// outlive the quick doctor.
func TestProbeLeavesNoCommandBehind(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho $$ > " + dir + "/nvcc.pid\nsleep 30 &\necho $! > " + dir + "/child.pid\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "nvcc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	nv := nvmlfake.DGXA100()
	nv.InitFunc = func() nvml.Return { return nvml.ErrorLibraryNotFound }
	f := Probe(context.Background(), Options{Home: dir, Cwd: dir, Environ: map[string]string{"PATH": dir},
		NVML: nv, Timeout: 300 * time.Millisecond})
	if st, _ := f.Source("cuda_toolkits"); !st.TimedOut {
		t.Fatalf("the hung nvcc should time out: %+v", st)
	}
	// The shell is Run's own child: reaped, so gone, by the time Probe returns.
	if pid := readPID(t, filepath.Join(dir, "nvcc.pid")); syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("nvcc (PID %d) still exists when Probe returns", pid)
	}
	mustEnd(t, readPID(t, filepath.Join(dir, "child.pid")), "nvcc's child")
}
