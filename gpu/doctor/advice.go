package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"strings"
)

func (j *judge) computeAdvice() {
	var q compat.WheelQuery
	q.DriverVersion, q.DriverCUDA, q.Windows = j.driverVersion(), j.driverCUDA(), j.windows()
	for _, g := range j.f.NVML.GPUs {
		if g.CC != "" {
			q.CCs = append(q.CCs, g.CC)
			q.GPUNames = append(q.GPUNames, g.Name)
		}
	}
	if e, ok := j.primaryPython(); ok {
		q.Python = e.Version
	}
	j.advice = j.m.AdviseTorch(q)
	j.adviceOK = len(q.CCs) > 0 && (q.DriverVersion != "" || q.DriverCUDA != "")
}

// wheelFix is the fix that replaces env's torch (or installs one) with a
// build that can work here. With the GPUs and the driver known: the newest
// official wheel that runs on all of them. With the GPUs known but not the
// driver: per driver generation, the newest wheel with kernels for them
// (never a build without kernels for the GPU), and the command that shows
// the driver. With neither: the CUDA builds of the installed release.
func (j *judge) wheelFix(env gpu.PythonEnv) []gpu.Step {
	py := env.Interpreter
	if env.Kind == "paste" || py == "" {
		py = "python"
	}
	_, hasTorch := env.Package("torch")
	if j.adviceOK && j.advice.OK {
		steps := []gpu.Step{}
		if env.Kind == "system" {
			text := "The system Python is managed by the distribution (pip refuses to change it); install the GPU build in a virtual environment:"
			if strings.HasPrefix(firstLocation(env, "torch"), "/usr/lib/python3/") {
				text = "This torch comes from the distribution (apt's python3-torch) and is CPU-only. Keep it, and install the GPU build in a virtual environment:"
			}
			steps = append(steps, gpu.Step{Text: text, Command: "python3 -m venv ~/.venv-gpu"})
			py, hasTorch = "~/.venv-gpu/bin/python", false
		}
		cmd := j.advice.PipCommand(py)
		if hasTorch {
			cmd = j.advice.ReinstallCommand(py)
		}
		return append(steps, gpu.Step{
			Text:    fmt.Sprintf("Install torch %s built for %s, the newest official wheel that runs on every GPU here with this driver:", j.advice.Torch, j.advice.Variant),
			Command: cmd,
		})
	}
	if steps := j.gpuOnlyAdvice(py); len(steps) > 0 {
		return append([]gpu.Step{{Text: "See the driver's version and the newest CUDA it runs (\"CUDA Version\" in the header):", Command: "nvidia-smi"}}, steps...)
	}
	if steps := j.driverOnlyAdvice(py); len(steps) > 0 {
		return steps
	}
	return j.releaseFix(env, py)
}

// releaseFix is the fix when the GPUs and the driver are unknown: the CUDA
// wheels of the installed torch release, newest CUDA first, with the driver
// each needs.
func (j *judge) releaseFix(env gpu.PythonEnv, py string) []gpu.Step {
	pk, _ := env.Package("torch")
	r, ok := j.m.TorchRelease(pk.Version)
	if !ok || len(r.Variants) == 0 {
		return []gpu.Step{{Text: "Install a CUDA build of PyTorch that matches your driver and GPU; pick the command at https://pytorch.org/get-started/locally/ and use --index-url, not plain PyPI. See what the driver supports:", Command: "nvidia-smi"}}
	}
	steps := []gpu.Step{{Text: "See which CUDA the driver supports (\"CUDA Version\" in the header) and the GPU model:", Command: "nvidia-smi"}}
	for i, v := range r.Variants {
		floor := j.m.FamilyFloor(gpu.MustVersion(v.CUDA).Major(), j.windows())
		text := fmt.Sprintf("Then install torch %s built for %s (driver ≥ %s; check that the GPU is in its list: %s):", r.Version, v.Name, floor, strings.ReplaceAll(v.Archs, ";", " "))
		if i > 0 {
			text = fmt.Sprintf("Or, with an older driver, for %s (driver ≥ %s):", v.Name, floor)
		}
		steps = append(steps, gpu.Step{Text: text, Command: fmt.Sprintf("%s -m pip install --force-reinstall torch==%s.* torchvision==%s.* --index-url https://download.pytorch.org/whl/%s", gpu.CommandWord(py), r.Version, r.TorchVision, v.Name)})
		if i == 1 {
			break
		}
	}
	return steps
}

func firstLocation(env gpu.PythonEnv, name string) string {
	if pk, ok := env.Package(name); ok {
		return pk.Location
	}
	return ""
}

// driverOnlyAdvice names the newest PyTorch wheel a known driver runs when
// the report does not show the GPU (so its architecture is not checked).
func (j *judge) driverOnlyAdvice(py string) []gpu.Step {
	q := j.wheelQuery()
	if q.DriverVersion == "" && q.DriverCUDA == "" {
		return nil
	}
	for _, e := range j.f.Pythons {
		q.Python = e.Version
	}
	a := j.m.AdviseTorch(q)
	if !a.OK {
		return nil
	}
	return []gpu.Step{{
		Text:    fmt.Sprintf("Without changing the driver (%s): torch %s built for %s runs on it, if it has kernels for your GPU (GTX 10xx and older need cu126 or older builds):", j.driverEvidence(), a.Torch, a.Variant),
		Command: a.ReinstallCommand(py)}}
}

// gpuOnlyAdvice names, for each driver generation, the newest wheel with
// kernels for every GPU the report shows, when the driver is unknown.
func (j *judge) gpuOnlyAdvice(py string) []gpu.Step {
	var q compat.WheelQuery
	for _, g := range j.f.NVML.GPUs {
		if g.CC != "" {
			q.CCs, q.GPUNames = append(q.CCs, g.CC), append(q.GPUNames, g.Name)
		}
	}
	if len(q.CCs) == 0 || j.driverVersion() != "" || j.driverCUDA() != "" {
		return nil
	}
	q.Windows = j.windows()
	var steps []gpu.Step
	seen := map[string]bool{}
	for i := len(j.m.CUDAFamilies) - 1; i >= 0 && len(steps) < 2; i-- {
		fam := j.m.CUDAFamilies[i]
		q.DriverVersion = fam.DriverLinux
		if q.Windows && fam.DriverWindows != "" {
			q.DriverVersion = fam.DriverWindows
		}
		// The driver must also know the GPUs (an RTX 5090 needs R570).
		for _, cc := range q.CCs {
			if d := j.m.MinDriver(cc); d != "" && !q.Windows && !gpu.VersionAtLeast(q.DriverVersion, d) {
				q.DriverVersion = d
			}
		}
		a := j.m.AdviseTorch(q)
		if !a.OK || seen[a.Variant] {
			continue
		}
		seen[a.Variant] = true
		text := fmt.Sprintf("With a driver ≥ %s (see nvidia-smi), torch %s built for %s has kernels for %s:", q.DriverVersion, a.Torch, a.Variant, strings.Join(q.GPUNames, ", "))
		steps = append(steps, gpu.Step{Text: text, Command: a.ReinstallCommand(py)})
	}
	return steps
}
func (j *judge) wheelQuery() compat.WheelQuery {
	return compat.WheelQuery{DriverVersion: j.driverVersion(), DriverCUDA: j.driverCUDA(), Windows: j.windows()}
}

func (j *judge) driverEvidence() string {
	dv, dc := j.driverVersion(), j.driverCUDA()
	switch {
	case dv != "" && dc != "":
		return fmt.Sprintf("driver %s (runs CUDA ≤ %s)", dv, dc)
	case dv != "":
		return "driver " + dv
	case dc != "":
		return "driver for CUDA " + dc
	}
	return "driver: unknown"
}

func pkgWhere(env gpu.PythonEnv, pk gpu.Package) string {
	return fmt.Sprintf("%s %s in %s (%s)", pk.Name, pk.Version, env.Interpreter, pk.Location)
}

func buildEvidence(pk gpu.Package) string {
	switch {
	case pk.CPUOnly && pk.BuildNote != "":
		return pk.BuildNote + ": no CUDA (CPU-only build)"
	case pk.CUDA != "" && pk.BuildNote != "":
		return pk.BuildNote + ": CUDA " + pk.CUDA
	}
	return ""
}
