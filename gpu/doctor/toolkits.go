package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"strings"
)

func (j *judge) ruleToolkits() {
	dc := j.driverCUDA()
	for _, t := range j.f.CUDA.Toolkits {
		if t.Version == "" || dc == "" {
			continue
		}
		tv, dv := gpu.MustVersion(gpu.MajorMinor(t.Version)), gpu.MustVersion(dc)
		if tv.Compare(dv) <= 0 {
			continue
		}
		// Another major cannot run at all; a newer minor runs through
		// minor version compatibility, but its PTX cannot be JIT-compiled
		// by this driver ("unsupported toolchain").
		title := fmt.Sprintf("CUDA toolkit %s is newer than the driver (CUDA %s): programs you compile with it will not run", t.Version, dc)
		weight := catalog.Strong
		if tv.Major() == dv.Major() {
			title = fmt.Sprintf("CUDA toolkit %s is newer than the driver (CUDA %s): kernels it compiles to PTX fail with \"unsupported toolchain\"", t.Version, dc)
			weight = catalog.Medium
		}
		j.addWeighted(gpu.Finding{ID: "toolkit_newer_than_driver", Cause: gpu.CauseDriverTooOld, Severity: gpu.SevWarning,
			Title:    title,
			Evidence: []string{fmt.Sprintf("toolkit %s at %s", t.Version, t.Path), j.driverEvidence()},
			Fix: append([]gpu.Step{{Text: "Framework wheels bring their own CUDA and do not need this toolkit. To compile with it, upgrade the driver:"}},
				j.driverUpgradeSteps()...)}, weight)
	}
	for _, n := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if j.f.Windows != nil {
			break // judged with CUDA_PATH_V* by the Windows rules
		}
		if ev, ok := j.f.EnvVar(n); ok && ev.Value != "" {
			found := false
			for _, t := range j.f.CUDA.Toolkits {
				if t.Path == ev.Value || strings.TrimRight(t.Path, "/") == strings.TrimRight(ev.Value, "/") {
					found = true
				}
			}
			if !found && len(j.f.Sources) > 0 && j.f.Origin == "live" {
				j.add(gpu.Finding{ID: "cuda_home_invalid", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
					Title:    n + " points to a folder with no CUDA toolkit",
					Evidence: []string{fmt.Sprintf("%s=%s", n, ev.Value)},
					Fix:      []gpu.Step{{Text: "Unset it, or point it at an installed toolkit:", Command: "unset " + n}}})
			}
		}
	}
}
