package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
)

// ErrKube says that kubectl could not list the nodes or create the Jobs.
var ErrKube = errors.New("fleet: kubectl failed")

// DefaultSelector picks the GPU nodes: GPU Feature Discovery's label.
const DefaultSelector = "nvidia.com/gpu.present=true"

// KubeRun is a run of the manifests with kubectl: apply, wait, collect
// the logs, delete.
type KubeRun struct {
	KubeOptions
	Names    []string // the nodes to check; empty: those Selector picks
	Selector string   // a label selector; "": DefaultSelector
	Binary   string   // copied into each pod when Image is ""
	Runner   Runner
	Matrix   *compat.Matrix
	Poll     time.Duration // between two looks at the pods; zero: 2 s (a quarter of a shorter Timeout)
	TempDir  string        // where the manifest file is written; "": os.TempDir
}

// kubeNodeList is what the fleet reads of `kubectl get nodes -o json`.
type kubeNodeList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Unschedulable bool `json:"unschedulable"`
		} `json:"spec"`
		Status struct {
			Allocatable map[string]string `json:"allocatable"`
			Conditions  []struct {
				Type    string `json:"type"`
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"items"`
}

// KubeNodes lists the nodes to check: those that can run a pod, and rows
// for those that cannot (cordoned, not Ready, not found).
func KubeNodes(ctx context.Context, r Runner, names []string, selector string) ([]KubeNode, []Node, error) {
	args := []string{"get", "nodes", "-o", "json"}
	if len(names) == 0 {
		if selector == "" {
			selector = DefaultSelector
		}
		args = append(args, "--selector="+selector)
	}
	out, stderr, err := r.Run(ctx, "kubectl", args...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: kubectl %s: %w%s", ErrKube, strings.Join(args, " "), err, saying(stderr))
	}
	var list kubeNodeList
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, nil, fmt.Errorf("%w: kubectl get nodes printed no node list: %w", ErrKube, err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var ok []KubeNode
	var down []Node
	for _, it := range list.Items {
		name := it.Metadata.Name
		if len(names) > 0 && !want[name] {
			continue
		}
		delete(want, name)
		if why := notSchedulable(it.Spec.Unschedulable, it.Status.Conditions); why != "" {
			down = append(down, Unanswered(name, StateDown, why, "kubernetes",
				gpu.Step{Text: "See the node's conditions and events:", Command: "kubectl describe node " + NodesPlaceholder}))
			continue
		}
		var gpus int
		fmt.Sscan(it.Status.Allocatable[GPUResource], &gpus)
		ok = append(ok, KubeNode{Name: name, GPUs: gpus})
	}
	for _, n := range names {
		if want[n] {
			down = append(down, Unanswered(n, StateFailed, "kubectl get nodes does not list it", "kubernetes",
				gpu.Step{Text: "List the nodes' names:", Command: "kubectl get nodes"}))
		}
	}
	if len(ok)+len(down) == 0 {
		return nil, nil, fmt.Errorf("%w: no node matches %q: label the GPU nodes, or name them with --nodes", ErrKube, selector)
	}
	return ok, down, nil
}

func notSchedulable(cordoned bool, conds []struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Message string `json:"message"`
}) string {
	if cordoned {
		return "the node is cordoned (spec.unschedulable)"
	}
	for _, c := range conds {
		if c.Type == "Ready" && c.Status != "True" {
			return "the node is not Ready: " + gpu.Sanitize(c.Message)
		}
	}
	return ""
}

// Run checks the nodes: it lists them, applies the manifests, copies the
// binary into the pods when there is no image, collects each pod's log
// and deletes the Jobs it created, even when ctx ends.
func (k KubeRun) Run(ctx context.Context) ([]Node, error) {
	k.fill()
	if k.Poll <= 0 {
		k.Poll = min(2*time.Second, k.Timeout/4)
	}
	nodes, rows, err := KubeNodes(ctx, k.Runner, k.Names, k.Selector)
	if err != nil || len(nodes) == 0 {
		return rows, err
	}
	manifest, err := Manifests(nodes, k.KubeOptions)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(k.TempDir, "gpuwizard-fleet-"+k.RunID+".yaml")
	if k.TempDir == "" {
		file = filepath.Join(os.TempDir(), "gpuwizard-fleet-"+k.RunID+".yaml")
	}
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		return nil, fmt.Errorf("writing the manifest: %w", err)
	}
	defer os.Remove(file)
	defer k.deleteJobs()
	if _, stderr, err := k.Runner.Run(ctx, "kubectl", "apply", "-f", file); err != nil {
		return nil, fmt.Errorf("%w: kubectl apply: %w%s", ErrKube, err, saying(stderr))
	}
	return append(rows, k.collect(ctx, nodes)...), nil
}

// deleteJobs deletes the run's Jobs (and so their pods), within 30 s of
// its own: the run's context may have ended.
func (k KubeRun) deleteJobs() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k.Runner.Run(ctx, "kubectl", "delete", "jobs", "--namespace="+k.Namespace,
		"--selector="+LabelRun+"="+k.RunID, "--ignore-not-found", "--wait=false")
}

// kubePod is what the fleet reads of a pod in `kubectl get pods -o json`.
type kubePod struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		Phase      string `json:"phase"`
		Reason     string `json:"reason"`
		Message    string `json:"message"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			State struct {
				Waiting *struct {
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"waiting"`
				Terminated *struct {
					ExitCode int    `json:"exitCode"`
					Reason   string `json:"reason"`
				} `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// stuck are the reasons a container waits that waiting will not cure.
var stuck = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}

// collect watches the run's pods until each has given its node's row, or
// the time is up: twice the Jobs' deadline (as long again to schedule the
// pods and pull the image).
func (k KubeRun) collect(ctx context.Context, nodes []KubeNode) []Node {
	done := map[string]Node{}
	copied := map[string]bool{}
	last := map[string]string{}
	deadline := time.Now().Add(2 * k.Timeout)
	for len(done) < len(nodes) {
		for _, p := range k.pods(ctx) {
			node := p.Metadata.Annotations[AnnotNode]
			if _, ok := done[node]; ok || node == "" {
				continue
			}
			if n, finished := k.look(ctx, p, copied); finished {
				done[node] = n
			} else {
				last[node] = podStatus(p)
			}
		}
		if len(done) == len(nodes) || ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(k.Poll):
		}
	}
	out := make([]Node, 0, len(nodes))
	for _, n := range nodes {
		if row, ok := done[n.Name]; ok {
			out = append(out, row)
			continue
		}
		why := fmt.Sprintf("no answer within %s", k.Timeout)
		if s := last[n.Name]; s != "" {
			why += " (the pod was " + s + ")"
		}
		out = append(out, Unanswered(n.Name, StateTimedOut, why, "kubernetes",
			gpu.Step{Text: "See why the pod did not run:", Command: "kubectl describe pods --namespace=" + k.Namespace + " --selector=" + LabelRun + "=" + k.RunID}))
	}
	return out
}

// pods lists the run's pods; none when kubectl does not answer (the next
// look may).
func (k KubeRun) pods(ctx context.Context) []kubePod {
	out, _, err := k.Runner.Run(ctx, "kubectl", "get", "pods", "--namespace="+k.Namespace,
		"--selector="+LabelRun+"="+k.RunID, "-o", "json")
	var list struct {
		Items []kubePod `json:"items"`
	}
	if err != nil || json.Unmarshal(out, &list) != nil {
		return nil
	}
	return list.Items
}

// podStatus is a pod's state in words: "Pending: 0/3 nodes are available".
func podStatus(p kubePod) string {
	s := p.Status.Phase
	for _, c := range p.Status.Conditions {
		if c.Type == "PodScheduled" && c.Status == "False" && c.Message != "" {
			return s + ": " + gpu.Sanitize(c.Message)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return s + ": " + gpu.Sanitize(w.Reason)
		}
	}
	return s
}

// look reads one pod: its row once it has ended (or cannot start), after
// copying the binary in when it runs and waits for it.
func (k KubeRun) look(ctx context.Context, p kubePod, copied map[string]bool) (Node, bool) {
	node, pod := p.Metadata.Annotations[AnnotNode], p.Metadata.Name
	describe := gpu.Step{Text: "See the pod's events:", Command: "kubectl describe pod --namespace=" + k.Namespace + " " + pod}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && stuck[w.Reason] {
			return Unanswered(node, StateFailed, "pod "+pod+": "+w.Reason+": "+gpu.Sanitize(w.Message), "kubernetes", describe), true
		}
	}
	switch p.Status.Phase {
	case "Running":
		if k.Image == "" && !copied[pod] {
			copied[pod] = true
			if err := k.copyBinary(ctx, pod); err != nil {
				return Unanswered(node, StateFailed, err.Error(), "kubernetes", describe), true
			}
		}
		return Node{}, false
	case "Succeeded", "Failed":
	default:
		return Node{}, false
	}
	if p.Status.Reason == "DeadlineExceeded" {
		return Unanswered(node, StateTimedOut, "the Job's deadline ("+k.Timeout.String()+") passed", "kubernetes", describe), true
	}
	out, stderr, err := k.Runner.Run(ctx, "kubectl", "logs", "--namespace="+k.Namespace, pod, "--container="+ContainerName)
	if err != nil {
		return Unanswered(node, StateFailed, "kubectl logs "+pod+": "+lastLine(stderr), "kubernetes", describe), true
	}
	n, perr := Parse(out, node, "kubernetes", k.Matrix)
	if perr != nil {
		return Unanswered(node, StateGarbage, "pod "+pod+": "+why(perr), "kubernetes", describe), true
	}
	return n, true
}

// copyBinary puts the binary into a running pod: as a .part file, then
// renamed, so that the pod's loop runs it only whole.
func (k KubeRun) copyBinary(ctx context.Context, pod string) error {
	part := BinaryDir + "/gpuwizard.part"
	local, err := kubectlLocal(k.Binary)
	if err != nil {
		return err
	}
	steps := [][]string{
		{"cp", local, k.Namespace + "/" + pod + ":" + part, "--container=" + ContainerName},
		{"exec", "--namespace=" + k.Namespace, pod, "--container=" + ContainerName, "--", "mv", part, BinaryDir + "/gpuwizard"},
	}
	for _, args := range steps {
		if _, stderr, err := k.Runner.Run(ctx, "kubectl", args...); err != nil {
			return fmt.Errorf("kubectl %s into pod %s: %w%s (the base image needs sh and tar)", args[0], pod, err, saying(stderr))
		}
	}
	return nil
}
