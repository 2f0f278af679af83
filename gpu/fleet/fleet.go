// Package fleet puts the doctor's reports of many machines (the GPU nodes
// of a cluster) in one table: a row per node, and above it the problems
// grouped across nodes with one fix per group. The reports come from
// Slurm (func Slurm: sinfo, then srun on each node), Kubernetes (Manifests,
// and KubeRun with kubectl) or files saved by any tool (ReadFiles); a node
// that could not answer
// (down, drained, timed out, garbage on its standard output) is a row too,
// with the reason.
package fleet

import (
	"sort"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/internal/printable"
)

// States of a node's answer.
const (
	StateAnswered   = "answered"   // a doctor report came back
	StateDown       = "down"       // the scheduler says the node is down, drained or not responding
	StateTimedOut   = "timed_out"  // no report within the time limit
	StateGarbage    = "garbage"    // what came back is not a doctor report
	StateFailed     = "failed"     // the launcher (srun, kubectl) failed for this node
	StateUnreadable = "unreadable" // a saved report that could not be read
)

// Node is one row: one machine and what its doctor said. A node that did
// not answer has State other than StateAnswered, Reason saying why, and
// one finding (ID "fleet_" + State) with the fix.
type Node struct {
	Node       string        `json:"node"`
	Ready      bool          `json:"ready"`
	Verdict    string        `json:"verdict"`
	State      string        `json:"state"`
	Reason     string        `json:"reason,omitempty"`
	GPUs       []string      `json:"gpus"`
	Driver     string        `json:"driver,omitempty"`
	CUDA       string        `json:"cuda,omitempty"` // the newest CUDA the driver runs
	Frameworks []string      `json:"frameworks"`     // "torch 2.9.0+cu128", one per framework and version
	Visible    string        `json:"cuda_visible_devices,omitempty"`
	Source     string        `json:"source,omitempty"` // the file, or "slurm", "kubernetes"
	Findings   []gpu.Finding `json:"findings"`
}

// Group is one problem shared by nodes: the same finding (ID and title)
// on each, with the fix once.
type Group struct {
	ID       string       `json:"id"`
	Cause    gpu.Cause    `json:"cause"`
	Severity gpu.Severity `json:"severity"`
	Title    string       `json:"title"`
	Count    int          `json:"count"`
	Nodes    []string     `json:"nodes"`
	Fix      []gpu.Step   `json:"fix,omitempty"`
}

// Report is the fleet's answer: ready only when every node is.
type Report struct {
	Ready  bool    `json:"ready"`
	Total  int     `json:"total"`
	Count  int     `json:"ready_count"`
	Nodes  []Node  `json:"nodes"`
	Groups []Group `json:"groups"`
}

// NodesPlaceholder stands, in a fix command of a node that did not
// answer, for the node's name; a group's fix gets the list of its nodes.
const NodesPlaceholder = "{nodes}"

// New makes each node's name one printable line, sorts the nodes by name
// (gpu2 before gpu10), gives duplicate names
// their source, groups the problems (errors and warnings) and fills in the
// counts.
func New(nodes []Node) Report {
	for i := range nodes {
		// A name is one line whatever a report or a file name holds:
		// control characters become visible escapes.
		nodes[i].Node = printable.String(nodes[i].Node)
	}
	sort.SliceStable(nodes, func(i, j int) bool { return NaturalLess(nodes[i].Node, nodes[j].Node) })
	dedupe(nodes)
	r := Report{Nodes: nodes, Total: len(nodes), Groups: groups(nodes)}
	for i := range nodes {
		for k := range nodes[i].Findings {
			fillNodes(nodes[i].Findings[k].Fix, nodes[i].Node)
		}
		if nodes[i].Ready {
			r.Count++
		}
	}
	r.Ready = r.Total > 0 && r.Count == r.Total
	return r
}

// dedupe names each node that shares its name with another after its
// source, so that rows and groups tell them apart.
func dedupe(nodes []Node) {
	count := map[string]int{}
	for _, n := range nodes {
		count[n.Node]++
	}
	for i, n := range nodes {
		if count[n.Node] > 1 && n.Source != "" {
			nodes[i].Node = n.Node + " (" + n.Source + ")"
		}
	}
}

// groups gathers the errors and warnings of every node by ID and title:
// most severe first, then the most nodes, then the cause's fix order.
func groups(nodes []Node) []Group {
	type key struct{ id, title string }
	at := map[key]int{}
	var out []Group
	for _, n := range nodes {
		seen := map[key]bool{}
		for _, f := range n.Findings {
			if f.Severity != gpu.SevError && f.Severity != gpu.SevWarning {
				continue
			}
			k := key{f.ID, f.Title}
			if seen[k] {
				continue
			}
			seen[k] = true
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, Group{ID: f.ID, Cause: f.Cause, Severity: f.Severity, Title: f.Title,
					Fix: append([]gpu.Step(nil), f.Fix...)})
			}
			out[i].Nodes = append(out[i].Nodes, n.Node)
		}
	}
	for i := range out {
		out[i].Count = len(out[i].Nodes)
		fillNodes(out[i].Fix, Hostlist(out[i].Nodes))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() < b.Severity.Rank()
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Cause.Rank() < b.Cause.Rank()
	})
	return out
}

// fillNodes puts names in the place of NodesPlaceholder in the steps.
func fillNodes(steps []gpu.Step, names string) {
	for i := range steps {
		steps[i].Command = strings.ReplaceAll(steps[i].Command, NodesPlaceholder, names)
		steps[i].Text = strings.ReplaceAll(steps[i].Text, NodesPlaceholder, names)
	}
}

// Unanswered is the row of a node that gave no report: state, the reason
// in words, and the fix (whose commands may name NodesPlaceholder).
func Unanswered(name, state, reason, source string, fix ...gpu.Step) Node {
	title := stateTitle[state]
	if title == "" {
		title = "The node gave no report"
	}
	return Node{Node: name, State: state, Reason: reason, Source: source,
		Verdict: "No report: " + reason + ".", GPUs: []string{}, Frameworks: []string{},
		Findings: []gpu.Finding{{ID: "fleet_" + state, Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title: title + ": " + reason, Fix: fix}}}
}

// stateTitle is the start of the title of a node that did not answer.
var stateTitle = map[string]string{
	StateDown:       "The node is not available",
	StateTimedOut:   "The node did not answer in time",
	StateGarbage:    "The node's answer is not a doctor report",
	StateFailed:     "The doctor could not be started on the node",
	StateUnreadable: "The saved report could not be read",
}

// NaturalLess orders names with their numbers by value: gpu2 before
// gpu10, node-a before node-b.
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digits is the length of the run of ASCII digits that s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
