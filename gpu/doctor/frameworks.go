package doctor

import (
	"fmt"

	"gpuwizard/gpu"
)

// ruleOtherFrameworks judges the builds of JAX, ONNX Runtime and
// PaddlePaddle: a CPU-only package where a GPU one is wanted, and the CPU
// and GPU packages installed side by side (the CPU one wins the import).
func (j *judge) ruleOtherFrameworks() {
	gpuHW := j.hasGPUHardware()
	for _, env := range j.f.Pythons {
		inUse := len(env.Commands) > 0 || env.Kind == "paste"
		pairs := []struct{ cpu, gpu, what, fix string }{
			{"onnxruntime", "onnxruntime-gpu", "ONNX Runtime", "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu"},
			{"paddlepaddle", "paddlepaddle-gpu", "PaddlePaddle", "pip uninstall -y paddlepaddle && pip install paddlepaddle-gpu"},
		}
		for _, p := range pairs {
			cpu, hasCPU := env.Package(p.cpu)
			gp, hasGPU := env.Package(p.gpu)
			switch {
			case hasCPU && hasGPU:
				j.add(gpu.Finding{ID: p.cpu + "_cpu_and_gpu_packages", Cause: gpu.CauseConflictingInstalls, Severity: sevInUse(inUse),
					Title:    fmt.Sprintf("Both %s and %s are installed in %s: the CPU package wins the import, so the GPU is not used", p.cpu, p.gpu, env.Interpreter),
					Evidence: []string{pkgWhere(env, cpu), pkgWhere(env, gp)},
					Fix:      []gpu.Step{{Text: "Keep only the GPU package (reinstall it, since the two share files):", Command: p.fix}}})
			case hasCPU && gpuHW && env.Kind == "paste" && j.reportWantsGPU():
				j.addWeighted(gpu.Finding{ID: p.cpu + "_cpu_package", Cause: gpu.CauseCPUOnlyBuild, Severity: gpu.SevError,
					Title:    fmt.Sprintf("%s is the CPU-only package; the GPU build is %s", p.cpu, p.gpu),
					Evidence: []string{pkgWhere(env, cpu)},
					Fix:      []gpu.Step{{Text: "Install the GPU package instead:", Command: p.fix}}}, 2)
			}
		}
		if jl, ok := env.Package("jaxlib"); ok && jl.CPUOnly && gpuHW && (env.Kind != "paste" || j.reportWantsGPU()) {
			j.add(gpu.Finding{ID: "jaxlib_cpu_only", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
				Title:    fmt.Sprintf("jaxlib %s in %s is the CPU build: JAX needs its CUDA plugin to use the GPU", jl.Version, env.Interpreter),
				Evidence: []string{pkgWhere(env, jl), "no jax-cudaNN-plugin wheel and no +cuda tag"},
				Fix:      []gpu.Step{{Text: "Install JAX with CUDA (Linux and WSL 2):", Command: `pip install -U "jax[cuda12]"`}}})
		}
	}
}

// reportWantsGPU: the report is about a GPU that is not used (an error
// text, torch saying no GPU, a framework listing only the CPU).
func (j *judge) reportWantsGPU() bool {
	p := j.f.Paste
	if p == nil {
		return false
	}
	if p.CUDAAvailable != nil && !*p.CUDAAvailable || len(p.Signatures) > 0 {
		return true
	}
	for _, d := range p.Devices {
		if d == "cpu" {
			return true
		}
	}
	return false
}
