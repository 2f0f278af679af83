package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

func (j *judge) ruleToolkits() {
	dc := j.driverCUDA()
	for _, t := range j.f.CUDA.Toolkits {
		if t.Version == "" || dc == "" {
			continue
		}
		if gpu.MustVersion(t.Version).Major() > gpu.MustVersion(dc).Major() {
			j.add(gpu.Finding{ID: "toolkit_newer_than_driver", Cause: gpu.CauseDriverTooOld, Severity: gpu.SevWarning,
				Title:    fmt.Sprintf("CUDA toolkit %s is newer than the driver (CUDA %s): programs you compile with it will not run", t.Version, dc),
				Evidence: []string{fmt.Sprintf("toolkit %s at %s", t.Version, t.Path), j.driverEvidence()},
				Fix: append([]gpu.Step{{Text: "Framework wheels bring their own CUDA and do not need this toolkit. To compile with it, upgrade the driver:"}},
					j.driverUpgradeSteps()...)})
		}
	}
	for _, n := range []string{"CUDA_HOME", "CUDA_PATH"} {
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
