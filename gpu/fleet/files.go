package fleet

import (
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
		return Unanswered(base, StateGarbage, path+": "+err.Error(), path,
			gpu.Step{Text: "Run the doctor on the node and save only its standard output:", Command: "gpuwizard doctor --json > NODE.json"})
	}
	if n.Node == "" {
		n.Node = base
	}
	return n
}
