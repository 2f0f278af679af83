package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
)

// ErrNotReport says that a text is not a doctor report (nor saved facts).
var ErrNotReport = errors.New("fleet: not a gpuwizard doctor --json report")

// frameworks are the packages the table names (the others, nvidia-*
// wheels and companions such as torchvision, stay in the findings).
var frameworks = map[string]bool{
	"torch": true, "tensorflow": true, "tensorflow-cpu": true, "tensorflow-gpu": true,
	"tf-nightly": true, "tensorflow-intel": true, "jax": true, "jaxlib": true,
	"paddlepaddle": true, "paddlepaddle-gpu": true, "onnxruntime": true,
	"onnxruntime-gpu": true, "cupy": true, "tensorrt": true,
}

// Parse reads what a node printed: `gpuwizard doctor --json`'s report, or
// facts saved with `doctor --save` (diagnosed here with m). Lines before
// the JSON (a login banner, a scheduler's notice) are skipped. name, when
// not empty, is the node's name; else the report's hostname is.
func Parse(data []byte, name, source string, m *compat.Matrix) (Node, error) {
	start := jsonStart(data)
	if start < 0 {
		return Node{}, fmt.Errorf("%w: no JSON object in it (it starts with %q)", ErrNotReport, firstLine(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	var raw struct {
		gpu.Report
		Schema int `json:"schema"`
	}
	if err := dec.Decode(&raw); err != nil {
		return Node{}, fmt.Errorf("%w: %w", ErrNotReport, err)
	}
	rep := raw.Report
	switch {
	case rep.Verdict != "" && rep.Facts != nil:
	case raw.Schema > 0:
		var f gpu.Facts
		if err := json.Unmarshal(data[start:], &f); err != nil {
			return Node{}, fmt.Errorf("%w: saved facts: %w", ErrNotReport, err)
		}
		rep = doctor.Diagnose(&f, m)
	default:
		return Node{}, fmt.Errorf("%w: JSON, but without the report's \"verdict\" and \"facts\" (make it with: gpuwizard doctor --json > FILE)", ErrNotReport)
	}
	return FromReport(rep, name, source), nil
}

// why is what a Parse error says beyond "not a report" (a row's title
// says that already).
func why(err error) string {
	return strings.TrimPrefix(err.Error(), ErrNotReport.Error()+": ")
}

// FromReport is the row of a node from its doctor report.
func FromReport(rep gpu.Report, name, source string) Node {
	f := rep.Facts
	if name == "" {
		name = f.Host.Hostname
	}
	n := Node{Node: name, Ready: rep.Ready, Verdict: rep.Verdict, State: StateAnswered, Source: source,
		Driver: f.NVML.DriverVersion, CUDA: f.NVML.CUDADriverVersion, Findings: rep.Findings,
		GPUs: make([]string, 0, len(f.NVML.GPUs)), Frameworks: frameworksOf(f)}
	if n.Findings == nil {
		n.Findings = []gpu.Finding{}
	}
	if n.Driver == "" {
		n.Driver = f.Driver.ModuleVersion
	}
	for _, g := range f.NVML.GPUs {
		n.GPUs = append(n.GPUs, g.Name)
	}
	if ev, set := f.EnvVar("CUDA_VISIBLE_DEVICES"); set {
		n.Visible = ev.Value
		if n.Visible == "" {
			n.Visible = `""`
		}
	}
	return n
}

// frameworksOf lists each framework of every Python once: "torch 2.9.0".
func frameworksOf(f *gpu.Facts) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, e := range f.Pythons {
		for _, p := range e.Packages {
			s := p.Name + " " + p.Version
			if p.Shadowed || !frameworks[p.Name] || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// jsonStart is where the first line that starts with "{" begins, -1 when
// none does.
func jsonStart(b []byte) int {
	for i := 0; i < len(b); {
		line := b[i:]
		trimmed := bytes.TrimLeft(line, " \t\r\ufeff")
		if len(trimmed) > 0 && trimmed[0] == '{' {
			return i + len(line) - len(trimmed)
		}
		nl := bytes.IndexByte(line, '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	return -1
}

// firstLine is the first non-empty line of b, cut to 60 bytes.
func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), 4096)]))
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return gpu.Sanitize(strings.TrimSpace(s))
}
