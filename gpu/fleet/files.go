package fleet

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/internal/safefile"
)

// MaxReport is the largest saved report a node's file may be (a doctor
// report of a machine with many GPUs and Python environments is well
// under 1 MiB).
const MaxReport = 32 << 20

// ReadFiles reads saved doctor reports (or saved facts), one a node,
// gathered by any tool (pdsh, Ansible, an ssh loop). A node's name is its
// report's hostname, else the file's name without its extension. A file
// that cannot be read, or holds no report, is a row with the reason.
func ReadFiles(paths []string, m *compat.Matrix) []Node {
	nodes := make([]Node, 0, len(paths))
	for _, p := range paths {
		nodes = append(nodes, ReadFile(p, m))
	}
	return nodes
}

// ReadFile is the row of one saved report.
func ReadFile(path string, m *compat.Matrix) Node {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	b, err := safefile.ReadFile(path, MaxReport, "a doctor report")
	if err != nil {
		return Unanswered(base, StateUnreadable, gpu.Sanitize(err.Error()), path,
			gpu.Step{Text: "Save each node's report with:", Command: "gpuwizard doctor --json > NODE.json"})
	}
	n, err := Parse(b, "", path, m)
	if err != nil {
		return Unanswered(base, StateGarbage, filepath.Base(path)+": "+why(err), path,
			gpu.Step{Text: "Run the doctor on the node and save only its standard output:", Command: "gpuwizard doctor --json > NODE.json"})
	}
	if n.Node == "" {
		n.Node = base
	}
	return n
}

// MaxFleetReport is the largest fleet report LoadReport reads (a report
// of 1,000 nodes is about 10 MB).
const MaxFleetReport = 256 << 20

// LoadReport reads a fleet report written with --json (gpuwizard fleet
// slurm|k8s|merge --json).
func LoadReport(path string) (Report, error) {
	b, err := safefile.ReadFile(path, MaxFleetReport, "a fleet report")
	if err != nil {
		return Report{}, fmt.Errorf("reading the fleet report: %w", err)
	}
	var r struct {
		Report
		Nodes *[]Node `json:"nodes"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("%s: not a fleet report (%w): make one with gpuwizard fleet slurm --json > FILE", path, err)
	}
	if r.Nodes == nil {
		return Report{}, fmt.Errorf("%s: no \"nodes\": not a fleet report (a single machine's doctor report? make a fleet's with gpuwizard fleet merge --json FILES > FILE)", path)
	}
	if r.Report.Groups == nil {
		return New(*r.Nodes), nil
	}
	r.Report.Nodes = *r.Nodes
	return r.Report, nil
}
