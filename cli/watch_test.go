package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
		{"two PIDs", []string{"4242", "5101"}, `unexpected argument "5101"`},
		{"bad interval", []string{"--interval", "1ms", "4242"}, "at least 100ms"},
		{"no such process", []string{"7777"}, "no process 7777"},
		{"dash without a command", []string{"--"}, "name a PID or a command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWatch(t, context.Background(), env, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.msg) {
				t.Fatalf("exit %d, stderr %q (want 2 and %q)", code, stderr, tt.msg)
			}
		})
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
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	code, out, _ := runWatch(t, ctx, env, "--interval", "200ms", "4242")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The whole report first, then a line per interval, then the summary.
	if !strings.HasPrefix(out, "[0:00] PID 4242 (python train.py --epochs 10): On GPU 0") || strings.Count(out, "PID 4242 (python") < 2 ||
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

func TestWatchCommandPassesThroughAndExits(t *testing.T) {
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--interval", "100ms", "--", "sh", "-c", "echo one; sleep 0.4; echo two >&2; exit 3")
	if code != 3 {
		t.Fatalf("the command's exit status: %d\n%s", code, stderr)
	}
	if out != "one\n" {
		t.Fatalf("stdout %q: the command's output only", out)
	}
	if !strings.Contains(stderr, "two\n") || !strings.Contains(stderr, "ended after") || !strings.Contains(stderr, "with exit status 3") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	code, _, stderr = runWatch(t, context.Background(), Env{}, "--", "gpuwizard-no-such-command")
	if code != 127 || !strings.Contains(stderr, "cannot start gpuwizard-no-such-command") {
		t.Fatalf("missing command: %d %s", code, stderr)
	}
	code, _, _ = runWatch(t, context.Background(), Env{}, "--once", "--window", "200ms", "--", "sh", "-c", "sleep 0.5; exit 4")
	if code != ExitFailed {
		t.Fatalf("--once gives the verdict's status, not the command's: %d", code)
	}
}

// With --json, each JSON line starts a line of standard output, however
// the command writes its own lines, and the command's bytes pass through.
func TestWatchCommandJSONLines(t *testing.T) {
	script := `printf 'half'; sleep 0.5; printf ' line\n'; sleep 0.3; printf 'end'`
	code, out, _ := runWatch(t, context.Background(), Env{}, "--json", "--interval", "100ms", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var own []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	jsonLines := 0
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("a broken JSON line %q: %v", l, err)
			}
			jsonLines++
			continue
		}
		own = append(own, l)
	}
	if strings.Join(own, "|") != "half line|end" || jsonLines < 2 {
		t.Fatalf("command lines %q, %d JSON lines:\n%s", own, jsonLines, out)
	}
}

func TestLineSync(t *testing.T) {
	var b bytes.Buffer
	s := &lineSync{w: &b, atStart: true}
	s.line([]byte("{1}\n"))
	s.Write([]byte("abc"))
	s.line([]byte("{2}\n"))
	s.Write([]byte("def\nghi"))
	s.line([]byte("{3}\n"))
	s.Write([]byte("\n"))
	s.Write([]byte("tail"))
	s.line([]byte("{4}\n"))
	s.flush()
	if want := "{1}\nabcdef\n{2}\nghi\n{3}\ntail\n{4}\n"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
}

func TestWatchStopsTheCommandItStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the grace period")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, _, stderr := runWatch(t, ctx, Env{}, "--interval", "100ms", "--", "sleep", "30")
	if code != 128+15 || time.Since(start) > 10*time.Second {
		t.Fatalf("exit %d after %s (want 143: SIGTERM after the grace period)\n%s", code, time.Since(start), stderr)
	}
	if !strings.Contains(stderr, "with exit status 143") {
		t.Fatalf("summary: %s", stderr)
	}
}
