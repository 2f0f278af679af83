package doctor

import (
	"fmt"
	"slices"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
)

// The commands that show what a report leaves out.
const (
	nextTorch = `python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_arch_list())"`
	nextSMI   = "nvidia-smi"
	nextFull  = "gpuwizard doctor --markdown"
)

// causeFix is the fix for an error text seen in a report: the catalogue's
// own steps for that text when it has them, else its cause's, made
// concrete with what the report shows (the driver, the GPU, the library).
func (j *judge) causeFix(h gpu.SignatureHit) []gpu.Step {
	if s, ok := catalog.Default().ByID(h.ID); ok && len(s.Fix) > 0 {
		return s.Fix
	}
	v := h.Values
	switch h.Cause {
	case gpu.CauseDriverTooOld:
		steps := []gpu.Step{{Text: "Upgrade the NVIDIA driver (Ubuntu: sudo ubuntu-drivers install; Windows and others: https://www.nvidia.com/Download/index.aspx), or use a build of the program for an older CUDA. See what the driver supports:", Command: nextSMI}}
		if a := j.torchAdvice("python", "Without changing the driver"); len(a) > 0 {
			steps = append(steps, a...)
		} else {
			steps = append(steps, gpu.Step{Text: "And what the framework was built for:", Command: nextTorch})
		}
		return steps
	case gpu.CauseArchUnsupported:
		if a := j.torchAdvice("python", "Replace the build"); len(a) > 0 {
			return a
		}
		text := "Install a build that has kernels for this GPU (PyTorch: pick it at https://pytorch.org/get-started/locally/ with --index-url; GPUs older than compute capability 5.0 need old releases). See the GPU's architecture and the build's list:"
		if cc := v["cc"]; cc != "" {
			text = "This GPU has compute capability " + cc + ". " + text
		} else if sm := v["sm"]; sm != "" {
			text = "This GPU is sm_" + sm + ". " + text
		}
		return []gpu.Step{{Text: text, Command: `python -c "import torch; print(torch.cuda.get_device_capability(0), torch.cuda.get_arch_list())"`}}
	case gpu.CauseCPUOnlyBuild:
		if env, ok := j.reportEnv(); ok {
			if _, has := env.Package("torch"); has {
				return j.wheelFix(env)
			}
		}
		if sig, ok := catalog.Default().ByID(h.ID); ok && slices.Contains(sig.Frameworks, "pytorch") {
			if a := j.torchAdvice("python", "Replace the CPU-only torch"); len(a) > 0 {
				return a
			}
		}
		return []gpu.Step{
			{Text: "Replace the CPU-only build with a CUDA build (PyTorch: from its own index, --index-url, since pip's default on Windows is CPU-only; TensorFlow: tensorflow[and-cuda] on Linux or WSL 2; JAX: jax[cuda12]; ONNX Runtime: onnxruntime-gpu). Check which build runs:", Command: nextTorch},
			{Text: "To pick the right CUDA build for the driver and GPU, run on that machine:", Command: "gpuwizard doctor"}}
	case gpu.CauseDriverMissing:
		return []gpu.Step{
			{Text: "The driver is missing or its kernel module is not loaded (or was upgraded without a reboot). Check the module and why it fails to load:", Command: "lsmod | grep -E 'nvidia|nouveau'; sudo dmesg | grep -iE 'nvidia|NVRM' | tail -20"},
			{Text: "After a driver upgrade, restart; on Ubuntu, (re)install the recommended driver:", Command: "sudo ubuntu-drivers install && sudo reboot"},
			{Text: "If Secure Boot is on, the module must be signed (or Secure Boot turned off):", Command: "mokutil --sb-state"}}
	case gpu.CauseWSLOrContainer:
		return []gpu.Step{
			{Text: "Inside a container, the GPU comes from the host: start it with the GPUs (NVIDIA Container Toolkit on the host) and check it there:", Command: "docker run --rm --gpus all ubuntu nvidia-smi"},
			{Text: "On WSL 2, install the NVIDIA driver on Windows only (never a Linux driver inside WSL), then restart WSL:", Command: "wsl --shutdown"},
			{Text: "On Colab: Runtime → Change runtime type → GPU."}}
	case gpu.CauseCudnnProblem:
		text := "The cuDNN the program was built for is missing or another one shadows it. With pip, the framework's own cuDNN wheel (nvidia-cudnn-cu11 for cuDNN 8 on CUDA 11, nvidia-cudnn-cu12 for cuDNN 9) must win: reinstall the framework so pip brings it, and keep other cuDNN folders off LD_LIBRARY_PATH. See which cuDNN is there:"
		if lib := v["library"]; lib != "" {
			text = "The program cannot load " + lib + ". " + text
		} else if v["cudnn_runtime"] != "" && v["cudnn_compiled"] != "" {
			text = fmt.Sprintf("The program was built with cuDNN %s but cuDNN %s was loaded: install cuDNN %s (same major, equal or newer minor). ", v["cudnn_compiled"], v["cudnn_runtime"], v["cudnn_compiled"]) + text
		}
		return []gpu.Step{{Text: text, Command: "ldconfig -p | grep libcudnn; pip list 2>/dev/null | grep -i cudnn; echo $LD_LIBRARY_PATH"}}
	case gpu.CauseTFGPULibs:
		text := "TensorFlow cannot load the CUDA libraries it was built for. Install the ones its version wants (Linux and WSL 2: pip install tensorflow[and-cuda]; older TensorFlow: the CUDA and cuDNN of https://www.tensorflow.org/install/source#gpu):"
		if lib := v["library"]; lib != "" {
			text = "TensorFlow cannot load " + lib + ". " + text
		}
		return []gpu.Step{{Text: text, Command: `pip install "tensorflow[and-cuda]"`},
			{Text: "Check what TensorFlow expects and sees:", Command: `python -c "import tensorflow as tf; print(tf.__version__, tf.sysconfig.get_build_info(), tf.config.list_physical_devices('GPU'))"`}}
	case gpu.CauseDeviceSelection:
		return []gpu.Step{
			{Text: "The program asks for a GPU that CUDA does not show it (GPUs are numbered from 0, CUDA_VISIBLE_DEVICES hides and renumbers them). List the GPUs and look for the variable:", Command: "nvidia-smi -L; echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"},
			{Text: "Then use device 0 (or an index below the count), or unset the variable in the script, shell or IDE:", Command: "unset CUDA_VISIBLE_DEVICES"}}
	case gpu.CauseOutOfMemory:
		return []gpu.Step{
			{Text: "Lower the batch size (or image size, or use mixed precision) until it fits; see what else holds GPU memory:", Command: "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"},
			{Text: "With PyTorch, fragmentation helps too:", Command: "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}}
	case gpu.CauseDeviceMismatchInCode:
		return []gpu.Step{{Text: "The code never moved every tensor to the GPU. Move the model and each input to the same device before the forward pass: device = torch.device(\"cuda\"); model.to(device); x = x.to(device); y = y.to(device). Tensors made inside forward (and indices) need device=x.device; after loading a checkpoint, move the optimizer state too."}}
	}
	return []gpu.Step{{Text: "Run the full check on that machine:", Command: nextFull}}
}

// torchAdvice is the most specific PyTorch wheel the report's facts allow,
// as reinstall steps (what says why, first): with the GPUs and the driver
// known, the newest official wheel that runs on both; with only the GPUs,
// per driver generation, the newest with kernels for them; with only the
// driver, the newest it runs. Nil when neither is known. A report that
// shows more never gets less: each case uses all the previous one knew.
func (j *judge) torchAdvice(py, why string) []gpu.Step {
	if j.adviceOK && j.advice.OK {
		var names []string
		for _, g := range j.f.NVML.GPUs {
			names = append(names, fmt.Sprintf("%s (compute capability %s)", g.Name, gpu.OrUnknown(g.CC)))
		}
		return []gpu.Step{{
			Text:    fmt.Sprintf("%s: torch %s built for %s is the newest official wheel that runs on %s with %s:", why, j.advice.Torch, j.advice.Variant, strings.Join(names, ", "), j.driverEvidence()),
			Command: j.advice.ReinstallCommand(py)}}
	}
	if a := j.gpuOnlyAdvice(py); len(a) > 0 {
		return append([]gpu.Step{{Text: "See the driver and the newest CUDA it runs (\"CUDA Version\" in the header):", Command: nextSMI}}, a...)
	}
	return j.driverOnlyAdvice(py)
}

// unusableFix is the fix when torch sees no GPU and the report does not
// say why.
func (j *judge) unusableFix() []gpu.Step {
	return []gpu.Step{{Text: "PyTorch sees no GPU. Find out why (a CPU-only build, the driver, CUDA_VISIBLE_DEVICES):", Command: nextTorch}, {Command: nextSMI}}
}

// reportEnv is the report's Python environment.
func (j *judge) reportEnv() (gpu.PythonEnv, bool) {
	for _, e := range j.f.Pythons {
		if e.Kind == "paste" {
			return e, true
		}
	}
	return gpu.PythonEnv{}, false
}

// joinWords is "a", "a and b", "a, b and c".
func joinWords(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}
