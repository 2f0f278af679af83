package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"gpuwizard/gpu/fleet"
)

// fakeKubectlEnv makes this test binary act as kubectl (TestMain), with
// its cluster's state in the folder the variable names: nodes.json (what
// `get nodes -o json` prints), logs/NODE (what the pod on NODE prints),
// and what it was asked: calls (one line a call), applied.yaml, copied-POD.
const fakeKubectlEnv = "GPUWIZARD_FAKE_KUBECTL"

// fakeKubectl is the fake cluster: every pod schedules and runs at once,
// but the one on "busy" (Pending: no free GPU) and, without an image, each
// pod waits Running until a binary has been copied into it.
func fakeKubectl(dir string, args []string) int {
	f, _ := os.OpenFile(filepath.Join(dir, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	fmt.Fprintln(f, strings.Join(args, " "))
	f.Close()
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch {
	case arg(0) == "get" && arg(1) == "nodes":
		b, _ := os.ReadFile(filepath.Join(dir, "nodes.json"))
		os.Stdout.Write(b)
	case arg(0) == "apply" && arg(1) == "-f":
		b, err := os.ReadFile(arg(2))
		if err != nil || os.WriteFile(filepath.Join(dir, "applied.yaml"), b, 0o644) != nil {
			fmt.Fprintln(os.Stderr, "error: cannot read", arg(2))
			return 1
		}
	case arg(0) == "get" && arg(1) == "pods":
		return fakePods(dir)
	case arg(0) == "cp":
		pod := strings.TrimPrefix(strings.Split(arg(2), ":")[0], "default/")
		os.WriteFile(filepath.Join(dir, "copied-"+pod), nil, 0o644)
	case arg(0) == "logs":
		b, err := os.ReadFile(filepath.Join(dir, "logs", fakeNodeOf(dir, arg(2))))
		if err != nil {
			fmt.Fprintln(os.Stderr, "error: no logs")
			return 1
		}
		os.Stdout.Write(b)
	case arg(0) == "exec", arg(0) == "delete":
	default:
		fmt.Fprintln(os.Stderr, "fake kubectl: unexpected call:", strings.Join(args, " "))
		return 1
	}
	return 0
}

// fakeJobs reads the applied manifest: each Job's pod name and node.
func fakeJobs(dir string) (pods, nodes []string, image bool) {
	b, _ := os.ReadFile(filepath.Join(dir, "applied.yaml"))
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var job struct {
			Metadata struct {
				Name        string            `yaml:"name"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				Template struct {
					Spec struct {
						Volumes []any `yaml:"volumes"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&job); errors.Is(err, io.EOF) || err != nil {
			return pods, nodes, image
		}
		pods = append(pods, job.Metadata.Name+"-x7k2p")
		nodes = append(nodes, job.Metadata.Annotations[fleet.AnnotNode])
		image = len(job.Spec.Template.Spec.Volumes) == 0
	}
}

func fakeNodeOf(dir, pod string) string {
	pods, nodes, _ := fakeJobs(dir)
	for i, p := range pods {
		if p == pod {
			return nodes[i]
		}
	}
	return ""
}

func fakePods(dir string) int {
	pods, nodes, image := fakeJobs(dir)
	var items []map[string]any
	for i, pod := range pods {
		status := map[string]any{"phase": "Succeeded"}
		if _, err := os.Stat(filepath.Join(dir, "copied-"+pod)); err != nil && !image {
			status["phase"] = "Running"
		}
		if nodes[i] == "busy" {
			status = map[string]any{"phase": "Pending", "conditions": []map[string]string{{"type": "PodScheduled",
				"status": "False", "message": "0/4 nodes are available: 1 Insufficient nvidia.com/gpu."}}}
		}
		items = append(items, map[string]any{"metadata": map[string]any{"name": pod,
			"annotations": map[string]string{fleet.AnnotNode: nodes[i]}}, "status": status})
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"items": items})
	return 0
}

// fakeNode is a node of `kubectl get nodes -o json`.
func fakeNode(name string, gpus int, cordoned bool) map[string]any {
	return map[string]any{"metadata": map[string]string{"name": name}, "spec": map[string]bool{"unschedulable": cordoned},
		"status": map[string]any{"allocatable": map[string]string{"nvidia.com/gpu": fmt.Sprint(gpus)},
			"conditions": []map[string]string{{"type": "Ready", "status": "True"}}}}
}

// TestFleetKubeRun runs `gpuwizard fleet k8s --run` against a fake kubectl
// on PATH: the manifests are applied, the binary copied into each running
// pod, the logs read as reports, and the Jobs deleted.
func TestFleetKubeRun(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyProgram(t, exe, filepath.Join(bin, "kubectl"+exeSuffix))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakeKubectlEnv, dir)
	nodes, _ := json.Marshal(map[string]any{"items": []any{fakeNode("gpu-a", 8, false), fakeNode("gpu-b", 1, false),
		fakeNode("cordoned", 2, true), fakeNode("busy", 4, false)}})
	_, ready, _ := run(t, "--facts", readyFacts, "--json")
	files := map[string]string{"nodes.json": string(nodes), "logs/gpu-a": ready, "logs/gpu-b": "exec format error\n"}
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Fleet(context.Background(), []string{"k8s", "--run", "--json", "--timeout", kubeTimeout, "--binary", exe},
		Env{Stdout: &stdout, Stderr: &stderr})
	var r fleet.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	want := map[string]string{"gpu-a": fleet.StateAnswered, "gpu-b": fleet.StateGarbage, "cordoned": fleet.StateDown, "busy": fleet.StateTimedOut}
	for _, n := range r.Nodes {
		if n.State != want[n.Node] {
			t.Errorf("%s: state %s (%s), want %s", n.Node, n.State, n.Reason, want[n.Node])
		}
		if n.Node == "busy" && !strings.Contains(n.Reason, "Insufficient nvidia.com/gpu") {
			t.Errorf("busy: reason %q lacks the scheduler's message", n.Reason)
		}
	}
	if len(r.Nodes) != 4 || code != ExitFailed {
		t.Fatalf("%d rows, exit %d", len(r.Nodes), code)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	for _, w := range []string{"get nodes -o json --selector=nvidia.com/gpu.present=true", "apply -f ", "cp " + exe[len(filepath.VolumeName(exe)):] + " default/gpuwizard-", // no drive letter: kubectl reads "C:" as a pod
		"exec --namespace=default gpuwizard-", "-- mv /opt/gpuwizard/gpuwizard.part /opt/gpuwizard/gpuwizard",
		"delete jobs --namespace=default --selector=app.kubernetes.io/instance="} {
		if !strings.Contains(string(calls), w) {
			t.Errorf("kubectl was not called with %q:\n%s", w, calls)
		}
	}
	applied, _ := os.ReadFile(filepath.Join(dir, "applied.yaml"))
	if strings.Count(string(applied), "kind: Job") != 3 || strings.Contains(string(applied), "cordoned") {
		t.Errorf("applied: want a Job for each schedulable node, none for the cordoned one:\n%s", applied)
	}
	if m, _ := filepath.Glob(filepath.Join(os.TempDir(), "gpuwizard-fleet-*.yaml")); len(m) > 0 {
		t.Errorf("manifest files left behind: %v", m)
	}
}

func TestFleetKubeManifestsWithoutCluster(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Fleet(context.Background(), []string{"k8s", "--nodes", "n1,n2", "--gpus-per-node", "1", "--image", "gw:1"},
		Env{Stdout: &stdout, Stderr: &stderr})
	if code != ExitOK || strings.Count(stdout.String(), "kind: Job") != 2 || !strings.Contains(stdout.String(), `nvidia.com/gpu: "1"`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

func TestFleetUsage(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{nil, "Usage: gpuwizard fleet slurm"},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"merge"}, "name the saved reports"},
		{[]string{"merge", "--json", "--csv", "x"}, "choose one of"},
		{[]string{"slurm", "--bcast", "sometimes"}, "choose auto, always or never"},
		{[]string{"slurm", "extra"}, `unexpected argument "extra"`},
		{[]string{"slurm", "--binary", "/nonexistent/gpuwizard"}, "not an executable file"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Fleet(context.Background(), tt.args, Env{Stdout: &stdout, Stderr: &stderr})
		if code != ExitUsage || !strings.Contains(stderr.String(), tt.msg) {
			t.Errorf("fleet %q: exit %d, stderr %q lacks %q", tt.args, code, stderr.String(), tt.msg)
		}
	}
}

func TestFleetMerge(t *testing.T) {
	dir := t.TempDir()
	_, ready, _ := run(t, "--facts", readyFacts, "--json")
	_, notReady, _ := run(t, "--facts", notReadyFacts, "--json")
	for name, body := range map[string]string{"a.json": ready, "b.json": notReady} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Fleet(context.Background(), []string{"merge", "--csv", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")},
		Env{Stdout: &stdout, Stderr: &stderr})
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if code != ExitFailed || len(lines) != 3 || !strings.HasPrefix(lines[0], "node,state,ready") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := Fleet(context.Background(), []string{"merge", filepath.Join(dir, "a.json")}, Env{Stdout: &stdout, Stderr: &stderr}); code != ExitOK ||
		!strings.Contains(stdout.String(), "Fleet: all 1 node ready") {
		t.Fatalf("one ready node: exit %d\n%s", code, stdout.String())
	}
}

// copyProgram copies the program src to dst, runnable (a copy rather than a
// link: Wine's links are not found on PATH).
func copyProgram(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
