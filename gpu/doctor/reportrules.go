package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/internal/plural"
)

// reportRules judge combinations of facts only a report shows together:
// CUDA_VISIBLE_DEVICES set in a script, TensorFlow beside a CUDA it was not
// built for, two Pythons named as running.
func (j *judge) reportRules() {
	j.reportVisibleDevices()
	j.reportTFCUDA()
	j.reportInterpreters()
	j.reportCPUBesideGPUPackage()
	j.reportDriverBelowCUDA()
	j.reportNoNVIDIAGPU()
	j.reportTwoBuildsInWords()
}

// noCUDAExplains are the error texts a machine without an NVIDIA GPU
// produces: a CPU-only framework (the right one there), no driver, no
// device, no CUDA libraries.
var noCUDAExplains = []gpu.Cause{gpu.CauseCPUOnlyBuild, gpu.CauseDriverMissing, gpu.CauseDeviceSelection,
	gpu.CauseWSLOrContainer, gpu.CauseDriverTooOld, gpu.CauseTFGPULibs}

// reportNoNVIDIAGPU: the report says there is no NVIDIA GPU, or names only
// an AMD or Apple one, and no tool shows an NVIDIA GPU: CUDA cannot run,
// whatever else fails. Intel graphics weigh less when the report names an
// NVIDIA GPU too (a laptop has both), or as a tool lists them ("Intel(R)
// UHD Graphics 620": one adapter of a list that may go on), unless the
// person says they are the machine's own ("I have Intel Iris graphics",
// "my PC is ..."); named alone in the person's words ("Intel ARC GPU"),
// they are the machine's graphics as far as the report tells.
func (j *judge) reportNoNVIDIAGPU() {
	p, f := j.f.Paste, j.f
	if len(f.NVML.GPUs) > 0 || f.NVML.Status == gpu.NVMLOK || f.Host.OS == "darwin" || j.hostedElsewhere() {
		return
	}
	said, other := p.Prose["no_nvidia"], p.Prose["other_gpu"]
	w, ev := catalog.Strong, said
	switch low := strings.ToLower(other); {
	case said != "":
	case other == "":
		return
	case p.Prose["other_gpu_own"] == "" && j.reading().quote(nvidiaOwnRE) != "":
		return // the person speaks of their NVIDIA GPU: another one named is beside it, or a thought
	case (strings.Contains(low, "intel") || strings.Contains(low, "iris") || strings.Contains(low, "xe graphics")) && p.Prose["other_gpu_own"] == "" && (j.nvidiaModelNamed() || strings.Contains(low, "(r)")):
		w, ev = catalog.Medium, other
	case p.Prose["other_gpu_own"] != "":
		ev = p.Prose["other_gpu_own"]
	default:
		ev = other
	}
	fix := []gpu.Step{{Text: "List the graphics adapters to be sure (Linux; on Windows: Get-CimInstance Win32_VideoController):", Command: "lspci | grep -iE 'vga|3d|display'"},
		{Text: "Without an NVIDIA GPU, CUDA cannot run: train on the CPU (slower, it works), or use a machine or cloud runtime with an NVIDIA GPU:", Command: "gpuwizard train --device cpu"},
		{Text: "With an AMD GPU on Linux, PyTorch's ROCm build is the GPU path (https://pytorch.org/get-started/locally/, ROCm); on a Mac, PyTorch's MPS device."}}
	j.addExplainingWeighted(w, gpu.Finding{ID: "report_no_nvidia_gpu", Cause: gpu.CauseOther, Severity: gpu.SevError,
		Title:    "The machine has no NVIDIA GPU, as the report says: CUDA cannot run there",
		Evidence: []string{`report: "` + ev + `"`},
		Fix:      fix}, noCUDAExplains...)
}

// nvidiaModelRE: an NVIDIA GPU by its name (GeForce, RTX 3060, Quadro,
// Tesla T4, A100), or nvidia-smi, which a machine with one shows.
var nvidiaModelRE = mustCue(`\bgeforce\b|\b(?:rtx|gtx) ?[0-9a]|\bquadro\b|\btesla\b|\btitan\b|\b[ahlv]100\b|\bmx ?[1-5][0-9]0\b|nvidia-smi|\bnvidia (?:gpu|card|graphics)s? (?:is|are|was|shows?)\b`,
	"geforce", "rtx", "gtx", "quadro", "tesla", "titan", "100", "mx", "nvidia")

// nvidiaOwnRE: an NVIDIA GPU the person has, or passes to a container or
// VM ("my Nvidia GPU", "pass through an Nvidia GPU").
var nvidiaOwnRE = mustCue(`\b(?:my|our) (?:\w+ )?nvidia (?:gpu|card|graphics)|\bpass(?:ing)?(?: ?through| on)? (?:an?|the|my) nvidia (?:gpu|card)|\bnvidia (?:gpu )?pass ?through\b`, "nvidia")

// nvidiaModelNamed: the report names an NVIDIA GPU somewhere. Intel
// graphics named beside one (a laptop's) say little; named alone, they are
// the machine's graphics as far as the report tells.
func (j *judge) nvidiaModelNamed() bool {
	return j.reading().quote(nvidiaModelRE) != ""
}

// reportDriverBelowCUDA: the report shows the driver and a CUDA the
// program wants (a toolkit, an image, in words) that it cannot run: another
// major, or before CUDA 11 (which brought minor version compatibility) a
// newer minor.
func (j *judge) reportDriverBelowCUDA() {
	dc := j.driverCUDA()
	if dc == "" || j.f.NVML.CUDADriverVersion != "" && j.f.Paste.Quotes["driver"] == nil {
		return
	}
	want := j.f.Paste.Prose["cuda"]
	if want == "" {
		want = j.f.Paste.Prose["conda_cuda"]
	}
	if want == "" {
		return
	}
	w, d := gpu.MustVersion(want), gpu.MustVersion(dc)
	if w == nil || d == nil || w.Compare(d) <= 0 || w.Major() == d.Major() && w.Major() >= 11 {
		return
	}
	j.addWeighted(gpu.Finding{ID: "report_driver_below_cuda", Cause: gpu.CauseDriverTooOld, Severity: gpu.SevError,
		Title:    fmt.Sprintf("The driver (%s) runs CUDA up to %s, but the program wants CUDA %s", j.driverEvidence(), dc, want),
		Evidence: quoteLines(j.f.Paste.Quotes["driver"]),
		Fix:      append([]gpu.Step{{Text: "Upgrade the driver (or use a build of the program, or an image, for the CUDA the driver runs):"}}, j.driverUpgradeSteps()...)},
		catalog.Medium)
}

// reportCPUBesideGPUPackage: the report installs a framework's GPU package
// (tensorflow-gpu, paddlepaddle-gpu, onnxruntime-gpu) and shows the CPU
// one at work: the CPU package, pulled in beside it, wins the import.
func (j *judge) reportCPUBesideGPUPackage() {
	p := j.f.Paste
	// A GPU package that could not be installed at all has nothing beside it.
	if len(p.GPUPackages) == 0 || j.hitID("tensorflow_gpu_package_unavailable") {
		return
	}
	cpuShown := j.hitOf(gpu.CauseCPUOnlyBuild)
	envCPU := false
	if env, ok := j.reportEnv(); ok {
		for _, pk := range env.Packages {
			envCPU = envCPU || pk.CPUOnly && !pk.Shadowed && pk.Name != "torch"
		}
	}
	cpuShown = cpuShown || envCPU
	if !cpuShown {
		return
	}
	name := p.GPUPackages[0]
	cpu := strings.TrimSuffix(name, "-gpu")
	weight := catalog.Strong
	if !cpuPackageNamed(asciiLower(p.Text), cpu) && !envCPU {
		// Only the GPU package is named, and something runs on the CPU:
		// the CPU package beside it is one reading of many.
		weight = catalog.Weak
	}
	j.addExplainingWeighted(weight, gpu.Finding{ID: "report_cpu_package_beside_gpu_package", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevError,
		Title:    fmt.Sprintf("%s is installed, but the CPU package %s runs: it was installed beside it (often pulled in by another package) and wins the import", name, cpu),
		Evidence: append(quoteLines(p.Quotes["tensorflow"]), "the report names "+strings.Join(p.GPUPackages, ", ")),
		Fix: []gpu.Step{{Text: "Remove both and reinstall only the GPU package (then install the other packages with --no-deps, or pin the GPU one):",
			Command: fmt.Sprintf("pip uninstall -y %s %s && pip install %s", cpu, name, name)}}},
		gpu.CauseCPUOnlyBuild)
}

// cpuPackageNamed says whether low names the package cpu on its own, not
// as the start of its GPU package's name nor as the module in code
// (onnxruntime, not onnxruntime-gpu nor onnxruntime.get_device()), or the
// CPU provider alone.
func cpuPackageNamed(low, cpu string) bool {
	if strings.Contains(low, "['cpuexecutionprovider']") || strings.Contains(low, "[\"cpuexecutionprovider\"]") {
		return true
	}
	return gpu.AnyAt(low, cpu, func(i int) bool {
		end := i + len(cpu)
		return end >= len(low) || low[end] != '-' && low[end] != '_' && low[end] != '.' && !isLetter(low[end])
	})
}

// reportVisibleDevices judges CUDA_VISIBLE_DEVICES as the report sets it.
// An empty value or -1 hides every GPU; an index the machine does not have
// hides it too; any other setting is worth knowing when the GPU is not
// used, and weighs little.
func (j *judge) reportVisibleDevices() {
	ev, set := j.f.EnvVar("CUDA_VISIBLE_DEVICES")
	if !set || j.driverOK && len(j.f.NVML.GPUs) > 0 && len(j.visible) > 0 && len(j.visible) == len(strings.Split(ev.Value, ",")) {
		return // judged as on a live machine, or it names GPUs that exist
	}
	val := strings.TrimSpace(ev.Value)
	quoted := quoteLines(j.f.Paste.Quotes["env"])
	fix := []gpu.Step{{Text: "Look for the variable in the script, the shell (~/.bashrc), the IDE's run configuration or the notebook, and remove it or name a GPU that exists (GPUs are numbered from 0; list them with nvidia-smi -L). It must be set before the framework is imported:", Command: "unset CUDA_VISIBLE_DEVICES"}}
	first := strings.TrimSpace(strings.Split(val, ",")[0])
	n, numErr := strconv.Atoi(first)
	switch {
	case val == "" || first == "-1":
		j.add(gpu.Finding{ID: "report_cuda_visible_devices_hides_all", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
			Title: "CUDA_VISIBLE_DEVICES hides every GPU", Evidence: quoted, Fix: fix})
	case numErr == nil && len(j.f.NVML.GPUs) > 0 && n >= len(j.f.NVML.GPUs):
		j.add(gpu.Finding{ID: "report_cuda_visible_devices_no_such_gpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
			Title:    fmt.Sprintf("CUDA_VISIBLE_DEVICES names GPU %d, but the machine has %s: CUDA sees none", n, plural.Count(len(j.f.NVML.GPUs), "GPU")),
			Evidence: quoted, Fix: fix})
	case numErr == nil && n >= 1 && (j.reportWantsGPU() || strings.Contains(strings.ToLower(strings.Join(j.f.Paste.Quotes["env"], " ")), "export")):
		j.addWeighted(gpu.Finding{ID: "report_cuda_visible_devices_index", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
			Title:    fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s: on a machine with fewer GPUs this hides them all, and set after the framework starts it is ignored", val),
			Evidence: quoted, Fix: fix}, catalog.Medium)
	default:
		j.addWeighted(gpu.Finding{ID: "report_cuda_visible_devices_set", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevWarning,
			Title:    fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s decides which GPUs the program sees (and renumbers them from 0)", val),
			Evidence: quoted, Fix: fix}, catalog.Weak)
	}
}

// reportTFCUDA compares a TensorFlow release with the CUDA the report
// shows installed: before 2.4 TensorFlow loads the runtime of exactly its
// CUDA minor version (libcudart.so.10.1), later ones that of its major.
func (j *judge) reportTFCUDA() {
	env, ok := j.reportEnv()
	if !ok {
		return
	}
	tf, ok := env.Package("tensorflow")
	if !ok {
		if tf, ok = env.Package("tensorflow-gpu"); !ok {
			return
		}
	}
	rel, ok := j.m.TFRelease(tf.Version)
	if !ok {
		return
	}
	// On native Windows from 2.11 there is no GPU build for any CUDA to
	// match (cueWindowsTensorFlow says so).
	if gpu.VersionAtLeast(tf.Version, "2.11") && j.windowsSaid(j.reading()) {
		return
	}
	have, where := "", ""
	for _, t := range j.f.CUDA.Toolkits {
		have, where = gpu.MajorMinor(t.Version), "the CUDA toolkit in the report: "+t.Version
	}
	if have == "" {
		if v := j.f.Paste.Prose["conda_cuda"]; v != "" {
			have, where = v, "cudatoolkit "+v+" (conda)"
		} else if v := j.f.Paste.Prose["cuda"]; v != "" {
			have, where = v, "CUDA "+v+" (as the report says)"
		}
	}
	if have == "" {
		return
	}
	want := rel.CUDA
	mismatch := gpu.MustVersion(have).Major() != gpu.MustVersion(want).Major()
	if !gpu.VersionAtLeast(tf.Version, "2.4") {
		mismatch = gpu.MajorMinor(have) != gpu.MajorMinor(want)
	}
	if !mismatch {
		return
	}
	j.addWeighted(gpu.Finding{ID: "report_tf_cuda_mismatch", Cause: gpu.CauseTFGPULibs, Severity: gpu.SevError,
		Title:    fmt.Sprintf("TensorFlow %s is built for CUDA %s and cuDNN %s, but the machine has CUDA %s: it cannot load its libraries and runs on the CPU", tf.Version, want, rel.CuDNN, have),
		Evidence: []string{pkgWhere(env, tf), where, fmt.Sprintf("tested build of TensorFlow %s: CUDA %s, cuDNN %s [compat.yaml: %s]", rel.Version, want, rel.CuDNN, rel.Source)},
		Fix: []gpu.Step{
			{Text: fmt.Sprintf("Install CUDA %s and cuDNN %s beside the other CUDA (their folders on LD_LIBRARY_PATH, or PATH on Windows), or with conda in this environment:", want, rel.CuDNN),
				Command: fmt.Sprintf("conda install -c conda-forge cudatoolkit=%s cudnn=%s", want, rel.CuDNN)},
			{Text: "Or install the TensorFlow release built for the CUDA you have (https://www.tensorflow.org/install/source#gpu); on Linux, tensorflow[and-cuda] (2.14 and later) brings its own CUDA:", Command: `pip install "tensorflow[and-cuda]"`}}},
		catalog.Medium)
}

// reportInterpreters: the report names two different Pythons as running
// (a Jupyter kernel and a shell, two environments).
func (j *judge) reportInterpreters() {
	p := j.f.Paste
	if len(p.Interpreters) < 2 {
		return
	}
	j.addWeighted(gpu.Finding{ID: "report_two_interpreters", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevError,
		Title:    "The report shows two different Pythons: the one that runs the code is not the one the packages were installed into",
		Evidence: append(quoteLines(p.Quotes["python"]), "interpreters: "+strings.Join(p.Interpreters, ", ")),
		Fix: []gpu.Step{{Text: "Install into, and run with, one interpreter. For Jupyter, register the environment as a kernel and choose it:", Command: "python -m pip install ipykernel && python -m ipykernel install --user --name myenv"},
			{Text: "Check which Python runs and what it has:", Command: `python -c "import sys; print(sys.executable)"`}}},
		catalog.Medium)
}

// hostedElsewhere: the program runs on a notebook service or a cloud
// machine, not on the machine whose graphics the report may name.
func (j *judge) hostedElsewhere() bool {
	if c := j.f.Host.Container; c == "colab" || c == "hosted" {
		return true
	}
	if j.hosted == 0 {
		j.hosted = -1
		r := j.reading()
		q := r.quote(hostedRE)
		// A line that says the program worked on Colab names where it
		// does not fail (the paste reader kept it apart).
		if q != "" && strings.Contains(j.f.Paste.Prose["hosted_worked"], q) {
			q = ""
		}
		if q != "" || r.quote(cloudRE) != "" || r.quote(ciRE) != "" {
			j.hosted = 1
		}
	}
	return j.hosted > 0
}

// twoBuildsRE: the report says a framework's CPU and GPU builds are both
// installed ("installed both the CPU and GPU versions", "conda wants a CPU
// version, but I have installed a GPU version", "CPU和GPU两个版本").
var twoBuildsRE = mustCue(`\b(?:cpu|gpu)[- ](?:version|build|package)s? (?:and|alongside|beside|together with|as well as) (?:the |a )?(?:gpu|cpu)[- ](?:version|build|package)|(?:cpu|gpu)\s*(?:和|与|跟|及)\s*(?:gpu|cpu)\s*(?:两个|两种)?\s*版本|\b(?:cpu|gpu)[- ]version\b[^\n]{0,80}\b(?:but|while|although|even though)\b[^\n]{0,20}\b(?:i|we) (?:have |had |already )*installed (?:a |an |the )?(?:gpu|cpu)[- ]version`,
	"cpu version", "cpu build", "cpu package", "cpu-version", "cpu-build", "cpu-package", "版本")

// reportTwoBuildsInWords: the person says the CPU and the GPU build of a
// framework are both installed: the CPU one wins the import, and the
// CPU-only errors the report shows follow from it.
func (j *judge) reportTwoBuildsInWords() {
	r := j.reading()
	q := r.quote(twoBuildsRE)
	if q == "" {
		return
	}
	check, reinstall := `python -c "import torch; print(torch.__version__, torch.__file__, torch.cuda.is_available())"`, "pip uninstall -y torch torchvision torchaudio && pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu126"
	switch {
	case strings.Contains(r.low, "paddle"):
		check, reinstall = `python -c "import paddle; print(paddle.__version__, paddle.device.is_compiled_with_cuda())"`, "pip uninstall -y paddlepaddle paddlepaddle-gpu && pip install paddlepaddle-gpu"
	case strings.Contains(r.low, "tensorflow") && !strings.Contains(r.low, "torch"):
		check, reinstall = `python -c "import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda())"`, `pip uninstall -y tensorflow tensorflow-cpu tensorflow-gpu && pip install "tensorflow[and-cuda]"`
	}
	j.addExplainingWeighted(catalog.Medium, gpu.Finding{ID: "report_cpu_and_gpu_builds_installed", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevError,
		Title:    "The report says a CPU build and a GPU build of the framework are both installed: the CPU one wins the import",
		Evidence: []string{`report: "` + q + `"`},
		Fix: []gpu.Step{{Text: "See which build the Python that runs the code imports:", Command: check},
			{Text: "Uninstall both builds, then install only the GPU one (or keep each in its own environment):", Command: reinstall}}},
		gpu.CauseCPUOnlyBuild)
}
