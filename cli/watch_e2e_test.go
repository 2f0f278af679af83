//go:build linux

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gpuwizard/gpu/watch"
)

// The end-to-end tests watch a real PyTorch training loop
// (testdata/watch/train_torch.py) on this machine: Debian's python3-torch
// (CPU-only), which make deps installs, run by /usr/bin/python3.

const torchScript = "testdata/watch/train_torch.py"

// systemTorch returns /usr/bin/python3 when it imports torch.
func systemTorch(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PyTorch (seconds)")
	}
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import torch (Debian: apt-get install python3-torch, which make deps installs): %v %s", py, err, out)
	}
	return py
}

// noNVIDIAGPU reports whether this machine's PCI bus holds no NVIDIA
// display or 3D controller.
func noNVIDIAGPU() bool {
	devs, _ := filepath.Glob("/sys/bus/pci/devices/*")
	for _, d := range devs {
		v, _ := os.ReadFile(filepath.Join(d, "vendor"))
		c, _ := os.ReadFile(filepath.Join(d, "class"))
		if strings.TrimSpace(string(v)) == "0x10de" && (strings.HasPrefix(string(c), "0x0300") || strings.HasPrefix(string(c), "0x0302")) {
			return false
		}
	}
	return true
}

// startTraining starts the training script and waits until torch is
// imported and the model is on its device. The process is killed (by its
// PID) and reaped when the test ends.
func startTraining(t *testing.T, py string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(py, append([]string{torchScript}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	waited := make(chan struct{})
	reap := func() { once.Do(func() { _ = cmd.Wait(); close(waited) }) }
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		reap()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.HasPrefix(sc.Text(), "training on") {
				signalled = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(2 * time.Minute):
		t.Fatal("the training script did not start within 2 minutes")
	}
	return cmd
}

func checkCPUAnswer(t *testing.T, rep watch.Report) {
	t.Helper()
	if rep.OnGPU || rep.State != watch.StateCPU {
		t.Fatalf("on_gpu %v state %s: %s", rep.OnGPU, rep.State, rep.Verdict)
	}
	if noNVIDIAGPU() && rep.Verdict != "On the CPU: no NVIDIA GPU on this machine" {
		t.Fatalf("verdict %q", rep.Verdict)
	}
	torchLib := false
	for _, l := range rep.Libraries {
		torchLib = torchLib || strings.Contains(filepath.Base(l.Path), "libtorch_cpu.so")
	}
	if !torchLib || !evidenceHas(rep, "libtorch_cpu.so") {
		t.Fatalf("the loaded torch library is not in the evidence: %v %q", rep.Libraries, rep.Evidence)
	}
	if len(rep.Frameworks) == 0 || rep.Frameworks[0].Name != "torch" || rep.Frameworks[0].Build != "cpu" {
		t.Fatalf("frameworks %+v", rep.Frameworks)
	}
}

func evidenceHas(rep watch.Report, s string) bool {
	for _, e := range rep.Evidence {
		if strings.Contains(e, s) {
			return true
		}
	}
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if strings.Contains(e, s) {
				return true
			}
		}
	}
	return false
}

func parseOneReport(t *testing.T, out string) watch.Report {
	t.Helper()
	var reps []watch.Report
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			var r watch.Report
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("JSON line %q: %v", l, err)
			}
			reps = append(reps, r)
		}
	}
	if len(reps) != 1 {
		t.Fatalf("want one JSON report, got %d:\n%s", len(reps), out)
	}
	return reps[0]
}

func TestWatchRealTorchByPID(t *testing.T) {
	py := systemTorch(t)
	cmd := startTraining(t, py, "--seconds", "120", "--workers", "2")
	pid := strconv.Itoa(cmd.Process.Pid)
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--once", "--json", "--window", "3s", pid)
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (on the CPU)\n%s\n%s", code, out, stderr)
	}
	rep := parseOneReport(t, out)
	checkCPUAnswer(t, rep)
	workers := 0
	for _, p := range rep.Processes {
		if p.Role == "worker" {
			workers++
		}
	}
	if workers != 2 || rep.Interpreter != "/usr/bin/python3" {
		t.Fatalf("DataLoader workers %d, interpreter %q: %+v", workers, rep.Interpreter, rep.Processes)
	}
	// Live, until the training ends: then a summary.
	go func() {
		time.Sleep(2500 * time.Millisecond)
		_ = cmd.Process.Kill() // the process this test started
	}()
	code, out, _ = runWatch(t, context.Background(), Env{}, "--interval", "1s", pid)
	if code != ExitFailed || !strings.Contains(out, "On the CPU") || !strings.Contains(out, "Process "+pid+" (python3 "+torchScript) || !strings.Contains(out, "ended after") {
		t.Fatalf("live watch: exit %d\n%s", code, out)
	}
	t.Logf("watch --interval 1s %s:\n%s", pid, out)
}

func TestWatchRealTorchCommand(t *testing.T) {
	py := systemTorch(t)
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--once", "--json", "--", py, torchScript, "--seconds", "6")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (on the CPU)\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "training on cpu\n") || !strings.Contains(stderr, "done after") || strings.Contains(out, "training on cpu") {
		t.Fatalf("the script's output must pass through, on standard error with --json:\n%s\n%s", out, stderr)
	}
	checkCPUAnswer(t, parseOneReport(t, out))
	// Live: the script's own exit status, watch's lines on stderr.
	code, out, stderr = runWatch(t, context.Background(), Env{}, "--interval", "2s", "--", py, torchScript, "--seconds", "6")
	if code != 0 {
		t.Fatalf("exit %d, want the script's 0\n%s", code, stderr)
	}
	if strings.Contains(out, "Evidence") || !strings.Contains(out, "training on cpu") {
		t.Fatalf("stdout holds only the script's output:\n%s", out)
	}
	if !strings.Contains(stderr, "On the CPU") || !strings.Contains(stderr, "libtorch_cpu.so") || !strings.Contains(stderr, "with exit status 0") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	if noNVIDIAGPU() && !strings.Contains(stderr, "On the CPU: no NVIDIA GPU on this machine") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	t.Logf("watch -- %s %s:\n%s", py, torchScript, stderr)
}

// On a machine with a GPU and a CUDA build of torch (GPUWIZARD_TEST_PYTHON,
// else python3 on PATH), the same script on cuda must answer "On GPU 0".
func TestWatchRealTorchOnGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PyTorch")
	}
	py := os.Getenv("GPUWIZARD_TEST_PYTHON")
	if py == "" {
		py = "python3"
	}
	if out, err := exec.Command(py, "-c", "import torch; assert torch.cuda.is_available()").CombinedOutput(); err != nil {
		t.Skipf("no CUDA torch with a GPU through %s: %v %s", py, err, lastLine(string(out)))
	}
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--once", "--json", "--window", "3s", "--", py, torchScript, "--device", "cuda", "--seconds", "10")
	rep := parseOneReport(t, out)
	if code != ExitOK || !rep.OnGPU || !strings.HasPrefix(rep.Verdict, "On GPU 0") {
		t.Fatalf("exit %d: %s\n%s", code, rep.Verdict, stderr)
	}
	t.Logf("verdict: %s", rep.Verdict)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
