package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
)

// ErrSlurm says that Slurm could not list the nodes (no sinfo, no
// controller, a partition or node list it does not know).
var ErrSlurm = errors.New("fleet: Slurm did not list the nodes")

// SlurmOptions say which nodes to check and how. The zero value of a
// field is its default.
type SlurmOptions struct {
	Partition string // sinfo and srun --partition; "": every partition
	Nodelist  string // sinfo --nodes (a hostlist: gpu[01-40]); "": every node
	// GPUsPerNode is the GPUs asked for on each node (srun --gres=gpu:N),
	// so that Slurm sets CUDA_VISIBLE_DEVICES as for a job. Negative:
	// every GPU the node has in Slurm's gres; 0: none.
	GPUsPerNode int
	Deep        bool          // doctor --deep: a real matmul and conv2d through each torch
	Timeout     time.Duration // for each node's answer; zero: 2 minutes (5 with Deep)
	Binary      string        // the gpuwizard to run on the nodes
	// BcastTo, when not empty, is where srun --bcast copies Binary on each
	// node (for a Binary not on a shared file system); the copies are
	// removed at the end.
	BcastTo  string
	Parallel int // nodes checked at once; zero: 16
	Runner   Runner
	Matrix   *compat.Matrix // diagnoses saved facts a node may print
}

func (o *SlurmOptions) fill() {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
		if o.Deep {
			o.Timeout = 5 * time.Minute
		}
	}
	if o.Parallel <= 0 {
		o.Parallel = 16
	}
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	if o.Binary == "" {
		o.Binary = "gpuwizard"
	}
}

// SlurmNode is a node as sinfo lists it.
type SlurmNode struct {
	Name   string
	State  string // idle, mixed, allocated, down*, drained, ...
	GPUs   int    // from its gres ("gpu:a100:8(S:0-1)" is 8)
	Reason string // why it is down or drained; "" none
}

// SlurmNodes lists the nodes with sinfo, each once.
func SlurmNodes(ctx context.Context, o SlurmOptions) ([]SlurmNode, error) {
	o.fill()
	args := []string{"--noheader", "--Node", "--format=%N|%T|%G|%E"}
	if o.Partition != "" {
		args = append(args, "--partition="+o.Partition)
	}
	if o.Nodelist != "" {
		args = append(args, "--nodes="+o.Nodelist)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, stderr, err := o.Runner.Run(ctx, "sinfo", args...)
	if err != nil {
		return nil, fmt.Errorf("%w: sinfo %s: %w%s (is this a Slurm login node? SLURM_CONF may name the configuration)",
			ErrSlurm, strings.Join(args, " "), err, saying(stderr))
	}
	var nodes []SlurmNode
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 4)
		if len(f) < 4 || f[0] == "" || seen[f[0]] {
			continue // a node in several partitions is listed once for each
		}
		seen[f[0]] = true
		reason := f[3]
		if reason == "none" || reason == "(null)" {
			reason = ""
		}
		nodes = append(nodes, SlurmNode{Name: f[0], State: strings.ToLower(f[1]), GPUs: gresGPUs(f[2]), Reason: reason})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: sinfo lists no node (partition %q, nodes %q): check the names with sinfo -N", ErrSlurm, o.Partition, o.Nodelist)
	}
	return nodes, nil
}

var gresIndexRE = regexp.MustCompile(`\([^)]*\)`)

// gresGPUs counts the GPUs of a gres string: "gpu:2", "gpu:a100:8(S:0-1)",
// "gpu:a100:4,gpu:v100:2", "(null)".
func gresGPUs(s string) int {
	n := 0
	for _, g := range strings.Split(gresIndexRE.ReplaceAllString(s, ""), ",") {
		f := strings.Split(strings.TrimSpace(g), ":")
		if f[0] != "gpu" {
			continue
		}
		if len(f) == 1 {
			n++
			continue
		}
		if c, err := strconv.Atoi(f[len(f)-1]); err == nil {
			n += c
		} else {
			n++ // gpu:TYPE without a count is one
		}
	}
	return n
}

// runnable are the states in which a node takes a job step (allocated
// and mixed ones after the jobs on them, or at once for their free GPUs).
var runnable = map[string]bool{"idle": true, "mixed": true, "allocated": true, "completing": true,
	"planned": true, "reserved": true}

// Slurm runs `gpuwizard doctor --json` on every node through srun, one
// task a node and Parallel nodes at once, and returns a row per node: the
// report, or why there is none (down, drained, timed out, garbage). It
// fails only when Slurm cannot list the nodes.
func Slurm(ctx context.Context, o SlurmOptions) ([]Node, error) {
	o.fill()
	list, err := SlurmNodes(ctx, o)
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, len(list))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, sn := range list {
		state := strings.TrimRight(sn.State, "*~#!%$@^-+")
		if !runnable[state] || strings.HasSuffix(sn.State, "*") {
			nodes[i] = downNode(sn)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			nodes[i] = o.runNode(ctx, sn)
		}()
	}
	wg.Wait()
	if o.BcastTo != "" {
		o.removeCopies(ctx, nodes)
	}
	return nodes, nil
}

// downNode is the row of a node Slurm will not run a job on.
func downNode(sn SlurmNode) Node {
	reason := sn.State
	if strings.HasSuffix(reason, "*") {
		reason = strings.TrimSuffix(reason, "*") + ", not responding"
	}
	if sn.Reason != "" {
		reason += " (Reason=" + sn.Reason + ")"
	}
	return Unanswered(sn.Name, StateDown, "Slurm says "+reason, "slurm",
		gpu.Step{Text: "See why Slurm set it aside:", Command: "sinfo -R --nodes=" + NodesPlaceholder},
		gpu.Step{Text: "Once the node is fixed, give it back to Slurm:", Command: "scontrol update NodeName=" + NodesPlaceholder + " State=RESUME"})
}

// srunArgs are the arguments that run cmd on one node as a job would.
// gpus 0 asks for no GPU.
func (o SlurmOptions) srunArgs(node string, gpus int, bcast bool, cmd ...string) []string {
	minutes := int(math.Ceil(o.Timeout.Minutes())) + 1
	args := []string{"--nodelist=" + node, "--nodes=1", "--ntasks=1", "--job-name=gpuwizard-fleet",
		"--quiet", "--time=" + strconv.Itoa(minutes)}
	if o.Partition != "" {
		args = append(args, "--partition="+o.Partition)
	}
	if gpus > 0 {
		args = append(args, "--gres=gpu:"+strconv.Itoa(gpus))
	}
	if bcast {
		args = append(args, "--bcast="+o.BcastTo)
	}
	return append(args, cmd...)
}

// doctorCommand is what srun runs on a node.
func (o SlurmOptions) doctorCommand() []string {
	cmd := []string{o.Binary, "doctor", "--json"}
	if o.Deep {
		cmd = append(cmd, "--deep")
	}
	return cmd
}

// runNode runs the doctor on one node and reads its answer.
func (o SlurmOptions) runNode(ctx context.Context, sn SlurmNode) Node {
	nctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	gpus := o.GPUsPerNode
	if gpus < 0 {
		gpus = sn.GPUs
	}
	args := o.srunArgs(sn.Name, gpus, o.BcastTo != "", o.doctorCommand()...)
	out, stderr, err := o.Runner.Run(nctx, "srun", args...)
	byHand := gpu.Step{Text: "Run it on the node by hand to see everything it says:",
		Command: "srun --nodelist=" + NodesPlaceholder + " --ntasks-per-node=1 " + strings.Join(o.doctorCommand()[:2], " ")}
	if nctx.Err() != nil && ctx.Err() == nil {
		why := fmt.Sprintf("no answer within %s", o.Timeout)
		if sn.State == "allocated" || sn.State == "mixed" {
			why += " (the node was " + sn.State + ": the step may wait for running jobs)"
		}
		return Unanswered(sn.Name, StateTimedOut, why, "slurm", byHand)
	}
	n, perr := Parse(out, sn.Name, "slurm", o.Matrix)
	switch {
	case perr == nil:
		return n
	case err != nil && len(bytes.TrimSpace(out)) == 0:
		return Unanswered(sn.Name, StateFailed, lastLine(stderr)+" ("+err.Error()+")", "slurm", byHand)
	}
	return Unanswered(sn.Name, StateGarbage, why(perr), "slurm", byHand)
}

// removeCopies deletes the binary srun --bcast left on the nodes that
// answered; a node that does not let it is left as it is.
func (o SlurmOptions) removeCopies(ctx context.Context, nodes []Node) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.Parallel)
	for _, n := range nodes {
		if n.State != StateAnswered && n.State != StateGarbage {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			o.Runner.Run(rctx, "srun", o.srunArgs(n.Node, 0, false, "rm", "-f", o.BcastTo)...)
		}()
	}
	wg.Wait()
}

// saying is ": " and the last line of a command's standard error, or ""
// when it wrote nothing there.
func saying(stderr []byte) string {
	if len(bytes.TrimSpace(stderr)) == 0 {
		return ""
	}
	return ": " + lastLine(stderr)
}

// lastLine is the last non-empty line of b, sanitised, at most 300 bytes.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	s := strings.TrimSpace(lines[len(lines)-1])
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "nothing on standard error"
	}
	return gpu.Sanitize(s)
}
