package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

func (j *judge) ruleEndOfSupport() {
	seen := map[string]bool{}
	for _, g := range j.f.NVML.GPUs {
		cc := g.CC
		a, ok := j.m.Arch(cc)
		if !ok || a.LastDriverBranch == "" || seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		torch := "torch wheels built for " + a.LastTorchVariant
		if a.LastTorch != "" {
			torch = fmt.Sprintf("torch ≤ %s built for %s", a.LastTorch, a.LastTorchVariant)
		}
		sev := gpu.SevInfo
		if a.Name == "Kepler" && j.f.Origin != "paste" {
			sev = gpu.SevWarning // from a report, context for the findings that say what fails
		}
		j.add(gpu.Finding{ID: "end_of_support_" + strings.ToLower(a.Name), Cause: gpu.CauseArchUnsupported, Severity: sev,
			Title: fmt.Sprintf("%s (%s GPU) is at the end of NVIDIA's support: driver %s is its last, %s its last PyTorch line", g.Name, a.Name, a.LastDriverBranch, torch),
			Evidence: []string{fmt.Sprintf("GPU %d: %s, compute capability %s (%s)", g.Index, g.Name, cc, a.Name),
				fmt.Sprintf("last driver branch R%s (runs CUDA ≤ %s); newer CUDA toolkits cannot build for it", a.LastDriverBranch, a.LastDriverCUDA)},
			Fix: []gpu.Step{{Text: fmt.Sprintf("Stay on driver branch %s and %s; newer wheels (cu128 and later) have no kernels for this GPU.", a.LastDriverBranch, torch)}}})
	}
}
