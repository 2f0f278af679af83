package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSlurm answers sinfo with a fixed list and srun per node; it records
// every srun's arguments.
type fakeSlurm struct {
	sinfo  string
	answer map[string]func(ctx context.Context) ([]byte, []byte, error) // node → srun's answer
	mu     sync.Mutex
	calls  [][]string
}

func (f *fakeSlurm) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	switch name {
	case "sinfo":
		return []byte(f.sinfo), nil, nil
	case "srun":
		f.mu.Lock()
		f.calls = append(f.calls, args)
		f.mu.Unlock()
		for _, a := range args {
			if node, ok := strings.CutPrefix(a, "--nodelist="); ok {
				if ans := f.answer[node]; ans != nil && !containsArg(args, "rm") {
					return ans(ctx)
				}
				return nil, nil, nil
			}
		}
	}
	return nil, []byte(name + ": command not found"), errors.New("exit status 127")
}

func containsArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// callFor is the srun call that ran the doctor on node.
func (f *fakeSlurm) callFor(node string) []string {
	for _, c := range f.calls {
		if containsArg(c, "--nodelist="+node) && containsArg(c, "doctor") {
			return c
		}
	}
	return nil
}

func TestSlurm(t *testing.T) {
	ok := func(kind string) func(context.Context) ([]byte, []byte, error) {
		b := reportJSON(t, kind, "ignored")
		return func(context.Context) ([]byte, []byte, error) { return b, nil, nil }
	}
	// Probed now: under Wine a probe takes longer than the nodes' timeout.
	old := ok(kindOldDriver)
	notReady := func(ctx context.Context) ([]byte, []byte, error) { // doctor exits 1 when not ready
		b, _, _ := old(ctx)
		return b, nil, errors.New("exit status 1")
	}
	fake := &fakeSlurm{
		sinfo: "gpu01|idle|gpu:2|none\ngpu02|mixed|gpu:a100:4(S:0-1)|none\ngpu03|down*|gpu:2|Not responding\n" +
			"gpu04|drained|gpu:2|bad fan\ngpu05|idle|gpu:1|none\ngpu06|allocated|gpu:8|none\ngpu07|idle|(null)|none\n" +
			"gpu01|idle|gpu:2|none\n", // gpu01 in a second partition
		answer: map[string]func(context.Context) ([]byte, []byte, error){
			"gpu01": ok(kindReady),
			"gpu02": notReady,
			"gpu05": func(context.Context) ([]byte, []byte, error) {
				return []byte("/bin/sh: gpuwizard: not found\n"), nil, errors.New("exit status 127")
			},
			"gpu06": func(ctx context.Context) ([]byte, []byte, error) { <-ctx.Done(); return nil, nil, ctx.Err() },
			"gpu07": func(context.Context) ([]byte, []byte, error) {
				return nil, []byte("srun: error: Unable to allocate resources: Invalid account\n"), errors.New("exit status 1")
			},
		},
	}
	nodes, err := Slurm(context.Background(), SlurmOptions{GPUsPerNode: -1, Timeout: 300 * time.Millisecond,
		Binary: "/shared/bin/gpuwizard", BcastTo: "/tmp/gw-copy", Partition: "gpu", Runner: fake, Matrix: mustMatrix(t)})
	if err != nil {
		t.Fatal(err)
	}
	r := New(nodes)
	want := map[string]string{"gpu01": StateAnswered, "gpu02": StateAnswered, "gpu03": StateDown, "gpu04": StateDown,
		"gpu05": StateGarbage, "gpu06": StateTimedOut, "gpu07": StateFailed}
	if len(r.Nodes) != len(want) {
		t.Fatalf("%d rows, want %d (a node in two partitions is one row)", len(r.Nodes), len(want))
	}
	for _, n := range r.Nodes {
		if n.State != want[n.Node] {
			t.Errorf("%s: state %s (%s), want %s", n.Node, n.State, n.Reason, want[n.Node])
		}
	}
	reasons := map[string]string{"gpu03": "down, not responding (Reason=Not responding)", "gpu04": "drained (Reason=bad fan)",
		"gpu05": "gpuwizard: not found", "gpu06": "the node was allocated", "gpu07": "Invalid account"}
	for _, n := range r.Nodes {
		if w := reasons[n.Node]; w != "" && !strings.Contains(n.Reason, w) {
			t.Errorf("%s: reason %q lacks %q", n.Node, n.Reason, w)
		}
	}
	if !r.Nodes[0].Ready || r.Nodes[1].Ready || r.Ready {
		t.Errorf("ready: gpu01 %v gpu02 %v fleet %v", r.Nodes[0].Ready, r.Nodes[1].Ready, r.Ready)
	}
	gres := map[string]string{"gpu01": "--gres=gpu:2", "gpu02": "--gres=gpu:4", "gpu06": "--gres=gpu:8"}
	for node, g := range gres {
		c := fake.callFor(node)
		if !containsArg(c, g) || !containsArg(c, "--bcast=/tmp/gw-copy") || !containsArg(c, "--partition=gpu") ||
			!containsArg(c, "/shared/bin/gpuwizard") {
			t.Errorf("%s: srun %q lacks %s, --bcast or --partition", node, c, g)
		}
	}
	if c := fake.callFor("gpu07"); c == nil || strings.Contains(strings.Join(c, " "), "--gres") {
		t.Errorf("a node without GPUs in Slurm gets no gres: %q", c)
	}
	removed := 0
	for _, c := range fake.calls {
		if containsArg(c, "rm") && containsArg(c, "/tmp/gw-copy") {
			removed++
		}
	}
	if removed != 3 { // gpu01, gpu02 answered, gpu05 printed garbage
		t.Errorf("the copies were removed on %d nodes, want 3", removed)
	}
}

func TestSlurmGPUsPerNode(t *testing.T) {
	fake := &fakeSlurm{sinfo: "n1|idle|gpu:8|none\n", answer: map[string]func(context.Context) ([]byte, []byte, error){}}
	for _, tt := range []struct {
		gpus int
		want string
	}{{1, "--gres=gpu:1"}, {0, ""}} {
		fake.calls = nil
		if _, err := Slurm(context.Background(), SlurmOptions{GPUsPerNode: tt.gpus, Runner: fake, Deep: true}); err != nil {
			t.Fatal(err)
		}
		c := strings.Join(fake.callFor("n1"), " ")
		if tt.want != "" && !strings.Contains(c, tt.want) || tt.want == "" && strings.Contains(c, "--gres") {
			t.Errorf("--gpus-per-node %d: srun %s", tt.gpus, c)
		}
		if !strings.HasSuffix(c, "gpuwizard doctor --json --deep") || !strings.Contains(c, "--time=6") {
			t.Errorf("deep: srun %s (want doctor --deep and a 5-minute limit plus one)", c)
		}
	}
}

func TestSlurmWithoutSlurm(t *testing.T) {
	_, err := Slurm(context.Background(), SlurmOptions{Runner: &fakeSlurm{}})
	if !errors.Is(err, ErrSlurm) || !strings.Contains(err.Error(), "sinfo lists no node") {
		t.Fatalf("err %v", err)
	}
	_, err = Slurm(context.Background(), SlurmOptions{Runner: ExecRunner{Env: []string{"PATH=/nonexistent"}}})
	if !errors.Is(err, ErrSlurm) || !strings.Contains(err.Error(), "Slurm login node") {
		t.Fatalf("err %v", err)
	}
}

func TestGresGPUs(t *testing.T) {
	for s, want := range map[string]int{"gpu:2": 2, "gpu:a100:8(S:0-1)": 8, "gpu:a100:4,gpu:v100:2": 6, "(null)": 0,
		"gpu": 1, "gpu:a100": 1, "mps:100,gpu:1(S:0,1)": 1} {
		if got := gresGPUs(s); got != want {
			t.Errorf("gresGPUs(%q) = %d, want %d", s, got, want)
		}
	}
}

// noisyEnv makes this test binary a noisy command (TestMain): 40 MB on its
// standard output, then 3,000 lines on its standard error and a last one.
const noisyEnv = "GPUWIZARD_FLEET_TEST_NOISY"

func TestMain(m *testing.M) {
	if os.Getenv(noisyEnv) == "1" {
		os.Stdout.Write(make([]byte, 40_000_000))
		for i := range 3000 {
			fmt.Fprintf(os.Stderr, "noise %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "srun: error: the last line")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestExecRunnerCapsOutput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := ExecRunner{Env: append(os.Environ(), noisyEnv+"=1")}
	out, stderr, err := r.Run(context.Background(), exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != MaxReport || len(stderr) > 2*64<<10 || lastLine(stderr) != "srun: error: the last line" {
		t.Fatalf("stdout %d bytes (cap %d), stderr %d bytes ending %q", len(out), MaxReport, len(stderr), lastLine(stderr))
	}
}
