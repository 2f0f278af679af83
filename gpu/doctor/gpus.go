package doctor

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// ruleAdvice names the PyTorch for this machine where none is installed.
// Where a torch is installed, its own findings say whether it is wrong and
// what replaces it; a right one gets no advice to reinstall.
func (j *judge) ruleAdvice() {
	if !j.hasGPUHardware() || !j.adviceOK || j.f.Origin == "paste" {
		return
	}
	var ev []string
	ev = append(ev, j.driverEvidence())
	for _, g := range j.f.NVML.GPUs {
		ev = append(ev, fmt.Sprintf("GPU %d: %s, compute capability %s", g.Index, g.Name, g.CC))
	}
	if !j.advice.OK {
		j.add(gpu.Finding{ID: "torch_wheel_none", Cause: gpu.CauseArchUnsupported, Severity: gpu.SevWarning,
			Title: "No official PyTorch wheel runs on every GPU here with this driver", Evidence: append(ev, j.advice.Rejected...),
			Fix: []gpu.Step{{Text: "Upgrade the driver, or train on a subset of the GPUs (CUDA_VISIBLE_DEVICES)."}}})
		return
	}
	if _, _, ok := j.primaryTorch(); ok {
		return
	}
	for _, r := range j.advice.Rejected {
		ev = append(ev, "not newer: "+r)
	}
	py := j.defaultPython()
	if e, ok := j.primaryPython(); ok {
		py = e.Interpreter
	}
	j.add(gpu.Finding{ID: "torch_wheel_advice", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    fmt.Sprintf("The PyTorch for this machine: torch %s built for %s (index %s)", j.advice.Torch, j.advice.Variant, j.advice.IndexURL),
		Evidence: ev,
		Fix:      []gpu.Step{{Text: "Install it (in the environment you train in):", Command: j.advice.PipCommand(py)}}})
}

// ruleGPUsOK lists the GPUs that answer. From a report it says only what
// the report shows: the driver answered for them.
func (j *judge) ruleGPUsOK() {
	if !j.driverOK {
		return
	}
	for _, g := range j.visible {
		mem := ""
		if g.MemoryTotalMiB > 0 {
			mem = fmt.Sprintf(", %d MiB (%d MiB free)", g.MemoryTotalMiB, g.MemoryFreeMiB)
		}
		ev := []string{j.driverEvidence()}
		var ids []string
		if g.UUID != "" {
			ids = append(ids, "UUID "+g.UUID)
		}
		if g.PCIBusID != "" {
			ids = append(ids, "PCI "+g.PCIBusID)
		}
		if len(ids) > 0 {
			ev = append(ev, strings.Join(ids, ", "))
		}
		title := fmt.Sprintf("GPU %d: %s, compute capability %s%s", g.Index, g.Name, gpu.OrUnknown(g.CC), mem)
		if j.f.Origin == "paste" {
			title += ", answers through the driver (as the report shows)"
		}
		j.add(gpu.Finding{ID: "gpu_ok", Cause: gpu.CauseOther, Severity: gpu.SevOK, Title: title, Evidence: ev})
	}
	if j.f.Origin == "paste" {
		return
	}
	any := false
	for _, e := range j.f.Pythons {
		for _, n := range []string{"torch", "tensorflow", "jax"} {
			if _, ok := e.Package(n); ok {
				any = true
			}
		}
	}
	if !any && len(j.visible) > 0 {
		create, venvPy := j.freshVenv()
		fix := []gpu.Step{{Text: "gpuwizard's own trainer uses the GPU without Python. For YOLO or PyTorch, make an environment:", Command: create}}
		if j.advice.OK {
			fix = append(fix, gpu.Step{Text: "Install PyTorch for this machine:", Command: j.advice.PipCommand(venvPy)},
				gpu.Step{Text: "And Ultralytics YOLO:", Command: gpu.CommandWord(venvPy) + " -m pip install ultralytics"})
		}
		j.add(gpu.Finding{ID: "no_framework", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
			Title: "No PyTorch, TensorFlow or JAX found in any Python environment", Evidence: []string{plural.Count(len(j.f.Pythons), "Python environment") + " searched"}, Fix: fix})
	}
}
