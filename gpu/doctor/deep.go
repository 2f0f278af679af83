package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"strings"
)

func (j *judge) ruleDeep() {
	for _, d := range j.f.Deep {
		inUse := false
		for _, e := range j.f.Pythons {
			if e.Interpreter == d.Interpreter && len(e.Commands) > 0 {
				inUse = true
			}
		}
		if !d.Ran || d.TimedOut {
			j.add(gpu.Finding{ID: "deep_check_failed", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
				Title:    "The deep check could not run in " + d.Interpreter,
				Evidence: []string{d.Error},
				Fix:      []gpu.Step{{Text: "Run it by hand to see the full error:", Command: gpu.CommandWord(d.Interpreter) + ` -c "import torch; print(torch.cuda.is_available()); torch.zeros(1).cuda()"`}}})
			continue
		}
		texts := append([]string{d.Error}, d.Warnings...)
		for _, dev := range d.Devices {
			texts = append(texts, dev.Error)
		}
		hits := catalog.Default().Match(strings.Join(texts, "\n"))
		if len(hits) > 0 && !j.hasGPUHardware() {
			j.add(gpu.Finding{ID: "deep_no_gpu", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
				Title:    fmt.Sprintf("PyTorch in %s cannot use a GPU here (expected: this machine has none)", d.Interpreter),
				Evidence: append([]string{"torch " + d.Torch + " (deep check)"}, hitLines(hits)...)})
			continue
		}
		if len(hits) > 0 && j.confirm(d.Interpreter, hits[0].Cause, hitLines(hits)) {
			continue
		}
		if len(hits) > 0 {
			h := hits[0]
			j.add(gpu.Finding{ID: "deep_" + h.ID, Cause: h.Cause, Severity: gpu.SevError,
				Title:    fmt.Sprintf("PyTorch in %s failed on the GPU: %s", d.Interpreter, h.Title),
				Evidence: append([]string{"torch " + d.Torch + " (deep check)"}, hitLines(hits)...),
				Fix:      j.wheelFix(gpu.PythonEnv{Interpreter: d.Interpreter})})
			continue
		}
		if d.CUDAAvailable != nil && !*d.CUDAAvailable {
			j.add(gpu.Finding{ID: "deep_cuda_unavailable", Cause: gpu.CauseOther, Severity: sevInUse(inUse),
				Title:    fmt.Sprintf("torch.cuda.is_available() is False in %s", d.Interpreter),
				Evidence: []string{"torch " + d.Torch, gpu.OrUnknown(d.Error)}})
			continue
		}
		for _, dev := range d.Devices {
			if dev.MatmulOK && dev.ConvOK {
				j.add(gpu.Finding{ID: "deep_gpu_works", Cause: gpu.CauseOther, Severity: gpu.SevOK,
					Title:    fmt.Sprintf("torch %s really trained on GPU %d (%s): matmul and cuDNN conv2d forward+backward passed", d.Torch, dev.Index, dev.Name),
					Evidence: []string{fmt.Sprintf("%s: torch %s, CUDA %s, cuDNN %s, arch list %s", d.Interpreter, d.Torch, d.TorchCUDA, d.CuDNN, strings.Join(d.ArchList, " "))}})
			} else if dev.Error == "" {
				j.add(gpu.Finding{ID: "deep_gpu_wrong_result", Cause: gpu.CauseOther, Severity: gpu.SevError,
					Title:    fmt.Sprintf("GPU %d (%s) returned non-finite gradients in the deep check", dev.Index, dev.Name),
					Evidence: []string{fmt.Sprintf("matmul ok=%v conv ok=%v", dev.MatmulOK, dev.ConvOK)},
					Fix:      []gpu.Step{{Text: "Test the hardware:", Command: "sudo dcgmi diag -r 2"}}})
			}
		}
	}
}

// confirm adds a deep-check error to the finding that already names the
// same cause for the same interpreter; it reports whether there was one.
func (j *judge) confirm(interp string, c gpu.Cause, lines []string) bool {
	for i := range j.out {
		f := &j.out[i]
		if f.Cause != c || f.Severity != gpu.SevError || len(f.Evidence) == 0 || !strings.Contains(f.Evidence[0], " in "+interp+" ") {
			continue
		}
		for _, l := range lines {
			f.Evidence = append(f.Evidence, "confirmed by the deep check: "+l)
		}
		return true
	}
	return false
}

func hitLines(hits []gpu.SignatureHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Line)
	}
	return out
}
