//go:build unix

package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"
)

// A machine whose user files are hostile: a pyvenv.cfg linked to
// /dev/zero, named pipes where version.py, .python-version and a device
// node should be, and files far bigger than what they should hold. The
// probe reads none of them, notes each in the facts, and every source
// still answers.
func TestProbeSkipsHostileFiles(t *testing.T) {
	const (
		venvCfg   = "/home/ada/project/.venv/pyvenv.cfg"
		torchPy   = fakemachine.VenvSite + "/torch/version.py"
		pyVersion = "/home/ada/project/.python-version"
		osRelease = "/etc/os-release"
		header    = "/usr/include/cudnn_version.h"
		yolo      = "/usr/local/bin/yolo"
	)
	m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
	delete(m.Files, venvCfg)
	delete(m.Files, torchPy)
	m.Links[venvCfg] = "/dev/zero"
	m.Files[osRelease] = "ID=ubuntu\n" + strings.Repeat("# padding\n", 20000) // 200 KB
	m.Files[header] = strings.Repeat("/* a comment */\n", 1<<17)              // 2 MiB
	m.Files[yolo] = "#!" + strings.Repeat("x", 4<<20)                         // a 4 MiB first line
	m.Files["/home/ada/.pyenv/shims/python3"] = "#!/bin/sh\n"
	m.Files["/home/ada/.pyenv/versions/3.12.3/bin/python3"] = ""
	m.Env["PATH"] = "/home/ada/.pyenv/shims:" + m.Env["PATH"]
	root := m.Build(t)
	if err := os.Chmod(filepath.Join(root, "/home/ada/.pyenv/shims/python3"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{torchPy, pyVersion, "/dev/nvidia-fifo"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f := probe.Probe(context.Background(), probe.Options{
		Root: root, Home: "/home/ada", Cwd: "/home/ada/project", Environ: m.Env,
		NVML: m.NVML, Runner: m.Run, Timeout: 5 * time.Second, GOOS: "linux", GOARCH: "amd64",
	})
	took := time.Since(start)
	runtime.ReadMemStats(&after)

	for _, s := range f.Sources {
		if s.TimedOut {
			t.Errorf("source %s timed out (a pipe blocked it?): %s", s.Name, s.Error)
		}
	}
	if took > 4*time.Second {
		t.Errorf("the probe took %s", took)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the probe allocated %d MiB: a file was read past its cap", alloc>>20)
	}
	want := map[string]string{
		venvCfg:   venvCfg + " (a link to /dev/zero) is a character device",
		torchPy:   torchPy + " is a named pipe (FIFO)",
		pyVersion: pyVersion + " is a named pipe (FIFO)",
		osRelease: osRelease + " is 195.3 KiB, more than the 64 KiB os-release files may have",
		header:    header + " is 2 MiB, more than the 1 MiB cudnn_version.h files may have",
	}
	got := map[string]string{}
	for _, s := range f.Skipped {
		got[s.Path] = s.Reason
	}
	for path, reason := range want {
		if !strings.Contains(got[path], reason) {
			t.Errorf("skipped %s: got %q, want %q", path, got[path], reason)
		}
		if strings.Contains(got[path], root) {
			t.Errorf("the note names the test's root: %q", got[path])
		}
	}
	if len(f.Skipped) != len(want) {
		t.Errorf("%d files skipped, want %d: %+v", len(f.Skipped), len(want), f.Skipped)
	}
	// The doctor shows the notes with the facts.
	if sum := f.Summary(); !strings.Contains(sum, "skipped        "+want[venvCfg]) {
		t.Errorf("the facts summary lacks the skipped pyvenv.cfg:\n%s", sum)
	}
	// What could be read still is: torch from its dist-info, the FIFO
	// device node listed (never opened), the kernel and the modules.
	var torch bool
	for _, e := range f.Pythons {
		if pk, ok := e.Package("torch"); ok && pk.Version == "2.11.0+cu130" && pk.CUDA == "13.0" && pk.BuildNote == "version tag +cu130" {
			torch = true
		}
	}
	if !torch {
		t.Errorf("torch was not found from its dist-info and version tag: %+v", f.Pythons)
	}
	var fifoNode bool
	for _, n := range f.Driver.DeviceNodes {
		fifoNode = fifoNode || (n.Path == "/dev/nvidia-fifo" && !n.Readable)
	}
	if !fifoNode || f.Host.Kernel != "6.8.0-45-generic" || len(f.Driver.Modules) == 0 {
		t.Errorf("device nodes %+v, kernel %q, modules %v", f.Driver.DeviceNodes, f.Host.Kernel, f.Driver.Modules)
	}
}
