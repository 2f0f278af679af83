package doctor

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
)

// windowsCPUTorch explains a CPU-only torch on Windows: PyPI's Windows
// wheels of torch are CPU-only, so `pip install torch` (no +cpu tag in
// its version) gets one; the CUDA builds come from PyTorch's own index.
func (j *judge) windowsCPUTorch(pk gpu.Package, title string, ev []string) (string, []string) {
	if !j.windows() || gpu.LocalTag(pk.Version) != "" {
		return title, ev
	}
	title = fmt.Sprintf("torch %s is the CPU-only build pip installs on Windows from PyPI: it can never use the GPU", pk.Version)
	return title, append(ev, "PyPI has only CPU builds of torch for Windows; the CUDA builds come from https://download.pytorch.org/whl/ with pip's --index-url")
}

// tfWindowsFix installs TensorFlow 2.10, the last with GPU support on
// native Windows, with the CUDA 11.2 and cuDNN 8.1 it was built with
// (conda-forge's, in the conda environment of py).
func tfWindowsFix(env gpu.PythonEnv) []gpu.Step {
	target := "-n tf210 python=3.10"
	py := gpu.CommandWord(env.Interpreter)
	if env.Kind == "conda" {
		target = "-p " + gpu.PSQuote(env.Prefix)
	}
	return []gpu.Step{
		{Text: "Use TensorFlow inside WSL 2 (recommended: TensorFlow 2.11 and later have no GPU support on native Windows), then install it there with pip install tensorflow[and-cuda]:", Command: "wsl --install"},
		{Text: "Or stay on native Windows with TensorFlow 2.10 (Python 3.7-3.10) and the CUDA 11.2 and cuDNN 8.1 it was built with, from conda-forge:", Command: "conda install " + target + " -c conda-forge cudatoolkit=11.2 cudnn=8.1.0"},
		{Text: "Then, in that environment:", Command: py + ` -m pip install "tensorflow<2.11"`}}
}

// judgeTFWindows judges a TensorFlow older than 2.11 on native Windows:
// a GPU build loads cudart64_*.dll and cudnn64_*.dll by name, from PATH,
// System32, or its conda environment's Library\bin once activated.
func (j *judge) judgeTFWindows(env gpu.PythonEnv, pk gpu.Package, inUse, gpuHW bool) {
	ev := []string{pkgWhere(env, pk)}
	if b := buildEvidence(pk); b != "" {
		ev = append(ev, b)
	}
	if !gpuHW {
		return
	}
	if pk.CPUOnly {
		j.add(gpu.Finding{ID: "tf_cpu_only", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title: fmt.Sprintf("TensorFlow %s in %s is a CPU-only build", pk.Version, env.Interpreter), Evidence: ev, Fix: tfWindowsFix(env)})
		return
	}
	if pk.CUDA == "" {
		return
	}
	cudaMajor := gpu.MustVersion(pk.CUDA).Major()
	cudnnMajor := gpu.MustVersion(pk.CuDNN).Major()
	var missing, viaConda []string
	for _, want := range []struct {
		lib   string
		major int
		dll   string
	}{{"libcudart", cudaMajor, fmt.Sprintf("cudart64_%d*.dll (CUDA %s)", cudaMajor, pk.CUDA)}, {"libcudnn", cudnnMajor, fmt.Sprintf("cudnn64_%d.dll (cuDNN %s)", cudnnMajor, pk.CuDNN)}} {
		if want.major < 0 {
			continue
		}
		where := j.windowsDLL(env, want.lib, want.major)
		switch {
		case where == "":
			missing = append(missing, want.dll)
		case where == gpu.OriginCondaEnv:
			viaConda = append(viaConda, want.dll)
		}
	}
	if len(missing) > 0 {
		j.add(gpu.Finding{ID: "tf_gpu_libs_missing", Cause: gpu.CauseTFGPULibs, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s cannot find the CUDA DLLs it was built for, so it will run on the CPU", pk.Version),
			Evidence: append(ev, "not on PATH, in System32 or in its conda environment: "+strings.Join(missing, ", ")), Fix: tfWindowsFix(env)})
		return
	}
	if len(viaConda) > 0 && len(env.Commands) == 0 {
		j.add(gpu.Finding{ID: "tf_gpu_libs_need_activation", Cause: gpu.CauseTFGPULibs, Severity: gpu.SevInfo,
			Title:    fmt.Sprintf("TensorFlow %s finds its CUDA DLLs only while its conda environment is activated", pk.Version),
			Evidence: append(ev, "in the environment's Library\\bin, which PATH holds only after conda activate: "+strings.Join(viaConda, ", ")),
			Fix:      []gpu.Step{{Text: "Activate the environment before running TensorFlow:", Command: "conda activate " + gpu.PSQuote(env.Prefix)}}})
	}
}

// windowsDLL says where a library of that major is found for env: an
// origin LoadLibrary reaches (PATH, System32), the conda environment's
// own Library\bin (OriginCondaEnv), or "" (not found).
func (j *judge) windowsDLL(env gpu.PythonEnv, lib string, major int) string {
	found := ""
	for _, l := range j.f.CUDA.Libraries {
		if l.Name != lib || l.Origin == gpu.OriginHeader || gpu.MustVersion(l.Version).Major() != major {
			continue
		}
		switch {
		case gpu.Reachable(l.Origin):
			return l.Origin
		case l.Origin == gpu.OriginCondaEnv && strings.HasPrefix(strings.ToLower(l.Path), strings.ToLower(env.Prefix)+`\`):
			found = gpu.OriginCondaEnv
		}
	}
	return found
}

// windowsCauseFix is the fix for an error text of a Windows report, in
// PowerShell, for the causes whose usual fix is Linux's; nil for the
// others (their fix holds on Windows too).
func (j *judge) windowsCauseFix(h gpu.SignatureHit) []gpu.Step {
	switch h.Cause {
	case gpu.CauseDriverMissing:
		return windowsDriverFix()
	case gpu.CauseCudnnProblem:
		text := "The cuDNN the program was built for is missing, or PATH does not reach it. NVIDIA's cuDNN 9 installer puts the DLLs in bin\\<CUDA version> below the folder it adds to PATH; cuDNN 8.3 to 8.x also need zlibwapi.dll. See which cuDNN DLLs PATH reaches:"
		if lib := h.Values["library"]; lib != "" {
			text = "The program cannot load " + lib + ". " + text
		}
		return []gpu.Step{{Text: text, Command: "where.exe cudnn*.dll zlibwapi.dll"},
			{Text: "With pip, let the framework bring its own cuDNN instead (torch's Windows wheels do; for others: pip install nvidia-cudnn-cu12), and see what Python sees:", Command: `python -m pip list | Select-String -Pattern 'cudnn|torch|tensorflow|onnxruntime'`}}
	case gpu.CauseTFGPULibs:
		return []gpu.Step{
			{Text: "TensorFlow 2.11 and later have no GPU support on native Windows: use WSL 2 (then pip install tensorflow[and-cuda] there):", Command: "wsl --install"},
			{Text: "Or TensorFlow 2.10 with the CUDA 11.2 and cuDNN 8.1 it was built with, in a conda environment:", Command: `conda create -n tf210 -c conda-forge python=3.10 cudatoolkit=11.2 cudnn=8.1.0; conda activate tf210; python -m pip install "tensorflow<2.11"`}}
	case gpu.CauseDeviceSelection:
		return []gpu.Step{
			{Text: "The program asks for a GPU that CUDA does not show it (GPUs are numbered from 0, CUDA_VISIBLE_DEVICES hides and renumbers them). List the GPUs and look for the variable:", Command: "nvidia-smi -L; $env:CUDA_VISIBLE_DEVICES"},
			{Text: "Then use device 0 (or an index below the count), or remove the variable for this terminal:", Command: "Remove-Item Env:CUDA_VISIBLE_DEVICES"}}
	case gpu.CauseOutOfMemory:
		// PyTorch's expandable_segments allocator is not supported on Windows.
		return []gpu.Step{{Text: "Lower the batch size (or image size, or use mixed precision) until it fits; see what else holds GPU memory (under WDDM the per-process column shows N/A: close other GPU programs, games and browsers):", Command: "nvidia-smi"}}
	}
	return nil
}

// powerShellSteps are steps whose commands Windows PowerShell 5.1 runs:
// "a && b" becomes "a; if ($?) { b }" (&& came with PowerShell 7).
func powerShellSteps(steps []gpu.Step) []gpu.Step {
	out := make([]gpu.Step, len(steps))
	for i, s := range steps {
		parts := strings.Split(s.Command, " && ")
		cmd := parts[len(parts)-1]
		for k := len(parts) - 2; k >= 0; k-- {
			cmd = parts[k] + "; if ($?) { " + cmd + " }"
		}
		out[i] = gpu.Step{Text: s.Text, Command: cmd}
	}
	return out
}
