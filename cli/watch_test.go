package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"
	"gpuwizard/gpu/watch"

	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

// fakeRoot is the fake machine of the watch package's tests: PID 4242
// trains on GPU 0, 5101 runs a CPU-only torch wheel.
const fakeRoot = "../gpu/watch/testdata/root"

// noCommands answers no external command (the probe of the fake machine).
type noCommands struct{}

func (noCommands) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
}

// fakeWatch is watch.Options for the fake machine, with one H100 that
// runs PID 4242 at 87 %.
func fakeWatch(t *testing.T) watch.Options {
	t.Helper()
	root, err := filepath.Abs(fakeRoot)
	if err != nil {
		t.Fatal(err)
	}
	s := nvmlfake.DGXA100()
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 1, nvml.Success }
	d := s.Devices[0]
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{PID: 4242, UsedGPUMemory: 10240 << 20}}, nvml.Success
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{GPU: 87}, nvml.Success }
	return watch.Options{Root: root, NVML: s, Machine: func(ctx context.Context, env map[string]string) *gpu.Facts {
		if env == nil {
			env = map[string]string{}
		}
		return probe.Probe(ctx, probe.Options{Root: root, Environ: env, NVML: s, Runner: noCommands{}, GOOS: "linux", GOARCH: "amd64", Home: env["HOME"], Cwd: "/"})
	}}
}

func runWatch(t *testing.T, ctx context.Context, env Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb syncBuffer
	env.Stdout, env.Stderr = &out, &errb
	code := Watch(ctx, args, env)
	return code, out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer a child's output copier and the test may
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWatchUsage(t *testing.T) {
	env := Env{Watch: fakeWatch(t)}
	for _, tt := range []struct {
		name string
		args []string
		msg  string
	}{
		{"nothing to watch", nil, "name a PID or a command"},
		{"not a PID", []string{"train.py"}, `"train.py" is not a process ID`},
		{"not a PID, with an escape sequence and a newline", []string{"1\x1b[2J\n2"}, `(to start a command, put it after --: gpuwizard watch -- 1\x1b[2J\n2)`},
		{"two PIDs", []string{"4242", "5101"}, `unexpected argument "5101"`},
		{"bad interval", []string{"--interval", "1ms", "4242"}, "at least 100ms"},
		{"no such process", []string{"7777"}, "no process 7777"},
		{"dash without a command", []string{"--"}, "name a PID or a command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWatch(t, context.Background(), env, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.msg) || strings.ContainsAny(strings.TrimSuffix(stderr, "\n"), "\x1b\n") {
				t.Fatalf("exit %d, stderr %q (want 2 and %q)", code, stderr, tt.msg)
			}
		})
	}
}

// A command that cannot be started is named escaped: its name cannot
// clear the terminal or break the line.
func TestWatchCommandNameEscaped(t *testing.T) {
	code, _, stderr := runWatch(t, context.Background(), Env{}, "--", "gpuwizard-no-such\x1b[2J\ncommand")
	if code != 127 || !strings.Contains(stderr, `cannot start gpuwizard-no-such\x1b[2J\ncommand: `) || strings.ContainsAny(strings.TrimSuffix(stderr, "\n"), "\x1b\n") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestWatchOncePID(t *testing.T) {
	env := Env{Watch: fakeWatch(t)}
	code, out, stderr := runWatch(t, context.Background(), env, "--once", "--json", "--window", "300ms", "4242")
	if code != ExitOK {
		t.Fatalf("on a GPU: exit %d\n%s%s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("--once --json prints one line, got %d:\n%s", len(lines), out)
	}
	var rep watch.Report
	if err := json.Unmarshal([]byte(lines[0]), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OnGPU || !strings.HasPrefix(rep.Verdict, "On GPU 0") || len(rep.Findings) == 0 || len(rep.Evidence) == 0 {
		t.Fatalf("report %+v", rep)
	}
	code, out, _ = runWatch(t, context.Background(), env, "--once", "--window", "300ms", "5101")
	if code != ExitFailed || !strings.HasPrefix(out, "On the CPU: a CPU-only build of torch 2.5.1+cpu is loaded") || !strings.Contains(out, "Evidence\n") {
		t.Fatalf("CPU-only wheel: exit %d\n%s", code, out)
	}
}

func TestWatchLivePIDStops(t *testing.T) {
	env := Env{Watch: fakeWatch(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // a reading takes up to 100 ms under Wine
	defer cancel()
	code, out, _ := runWatch(t, ctx, env, "--interval", "200ms", "4242")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The whole report first, then a line per interval, then the summary.
	// (The first comes after the doctor's probe: at 0:01 on a loaded
	// machine under Wine.)
	firstLive := regexp.MustCompile(`^\[0:0[0-9]\] PID 4242 \(python train.py --epochs 10\): On GPU 0`)
	if !firstLive.MatchString(out) || strings.Count(out, "PID 4242 (python") < 2 ||
		!strings.Contains(out, "Process 4242 (python train.py --epochs 10), watched for") || !strings.Contains(out, "It was on GPU 0 in") {
		t.Fatalf("live output:\n%s", out)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	_, out, _ = runWatch(t, ctx2, env, "--json", "--interval", "200ms", "4242")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last watch.Report
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || !last.Final || last.Summary == nil || last.Summary.Ended {
		t.Fatalf("the last JSON line sums up: %v %s", err, lines[len(lines)-1])
	}
}
