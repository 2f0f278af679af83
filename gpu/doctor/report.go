package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/internal/plural"
)

// gpuUnusable are the causes that make a GPU unusable: what a symptom such
// as "No CUDA GPUs are available" is a symptom of, when its signature does
// not say.
var gpuUnusable = []gpu.Cause{gpu.CauseDriverMissing, gpu.CauseWSLOrContainer, gpu.CauseDriverTooOld,
	gpu.CauseCPUOnlyBuild, gpu.CauseArchUnsupported, gpu.CauseConflictingInstalls, gpu.CauseDeviceSelection, gpu.CauseTFGPULibs}

// quoteKinds says which report lines prove a finding of each cause.
var quoteKinds = map[gpu.Cause][]string{
	gpu.CauseCPUOnlyBuild:        {"torch", "device", "cuda_available", "jax"},
	gpu.CauseDriverTooOld:        {"driver", "torch"},
	gpu.CauseArchUnsupported:     {"gpu", "torch"},
	gpu.CauseDriverMissing:       {"driver"},
	gpu.CauseOutOfMemory:         {"gpu_memory"},
	gpu.CauseDeviceSelection:     {"env", "cuda_available"},
	gpu.CauseTFGPULibs:           {"tensorflow"},
	gpu.CauseCudnnProblem:        {"cudnn"},
	gpu.CauseConflictingInstalls: {"torch", "python"},
	gpu.CauseWSLOrContainer:      {"os"},
}

// judgePaste weighs what only a report can tell: its error texts, each
// evidence for a cause with the strength the catalogue gives it, and the
// situations a report shows (a container started without GPUs, a Colab
// runtime without one, WSL). An error text joins a finding of its own
// cause; a symptom joins the finding of the cause that produces it; the
// rest become findings of their own, weighted. Then come the report's lines
// as evidence, and what to run when the report is not enough.
func (j *judge) judgePaste() {
	p := j.f.Paste
	if p == nil {
		return
	}
	j.reportSituations()
	j.reportRules()
	hits := torchCapabilityRange(specificFirst(tfLibraryLog(p.Signatures)), p.Text)
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Strength > hits[b].Strength })
	for _, h := range hits {
		if j.explainedBy(h) || j.joinSameCause(h) || h.Strength <= catalog.Weak && j.explainSymptom(h) {
			continue
		}
		fix := j.causeFix(h)
		ev := []string{`report: "` + h.Line + `"`}
		if h.Cause == gpu.CauseCudnnProblem {
			ev = append(ev, j.cudnnMismatch(h.Line)...)
		}
		sev := gpu.SevError
		if h.Cause == gpu.CauseOther && h.Strength <= catalog.Weak {
			sev = gpu.SevWarning
		}
		j.addWeighted(gpu.Finding{ID: "report_" + h.ID, Cause: h.Cause, Severity: sev,
			Title: "The report shows " + h.Title, Evidence: ev, Fix: fix}, max(h.Strength, catalog.Weak))
	}
	// torch says it sees no GPU, and nothing above says why.
	if p.CUDAAvailable != nil && !*p.CUDAAvailable && !j.hasProblem() {
		j.addWeighted(gpu.Finding{ID: "report_cuda_unavailable", Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title:    "PyTorch sees no GPU, and the report does not say why",
			Evidence: quoteLines(p.Quotes["cuda_available"]),
			Fix:      j.unusableFix()}, catalog.Weak)
	}
	if p.PipTorchNoIndex && j.windows() && !j.hasProblem() {
		j.addWeighted(gpu.Finding{ID: "report_pip_torch_windows", Cause: gpu.CauseCPUOnlyBuild, Severity: gpu.SevError,
			Title:    "torch was installed from PyPI on Windows, where its wheels are CPU-only",
			Evidence: quoteLines(p.Quotes["torch"]),
			Fix:      []gpu.Step{{Text: "Reinstall it from PyTorch's own index for your CUDA (see https://pytorch.org/get-started/locally/):", Command: "pip install --force-reinstall torch torchvision --index-url https://download.pytorch.org/whl/cu126"}}}, catalog.Medium)
	}
	if p.DeviceUsed == "cpu" && !j.hasProblem() {
		j.addWeighted(gpu.Finding{ID: "report_trains_on_cpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevWarning,
			Title:    "Ultralytics says it ran on the CPU",
			Evidence: quoteLines(p.Quotes["device"]),
			Fix: []gpu.Step{{Text: "Ultralytics uses the CPU silently when torch sees no GPU, or when device is not set. Ask for the GPU explicitly (an error then says why it cannot):", Command: "yolo train model=yolov8n.pt data=coco8.yaml device=0"},
				{Text: "And check torch:", Command: nextTorch}}}, catalog.Weak)
	}
	j.runNext()
}

// tfLibraryLog folds the cuDNN lines of TensorFlow's library log into
// TensorFlow's missing libraries: "Could not load dynamic library
// 'libcudnn.so.8'" beside libcudart and libcublas is TensorFlow without its
// CUDA libraries, not a cuDNN problem of its own.
func tfLibraryLog(in []gpu.SignatureHit) []gpu.SignatureHit {
	hits := append([]gpu.SignatureHit(nil), in...)
	tf := false
	for _, h := range hits {
		tf = tf || h.Cause == gpu.CauseTFGPULibs && h.Strength >= catalog.Medium
	}
	for i := range hits {
		if tf && hits[i].Cause == gpu.CauseCudnnProblem && (strings.Contains(hits[i].Line, "dso_loader") || strings.Contains(hits[i].Line, "Could not load dynamic library")) {
			hits[i].Cause = gpu.CauseTFGPULibs
		}
	}
	return hits
}

// narrower is, per signature, the broader ones a hit of it stands for: the
// same text told more closely (tensors on two GPUs are tensors on
// different devices, which alone would prove code that mixes the CPU and
// the GPU).
var narrower = map[string][]string{"tensors_on_two_gpus": {"tensors_on_different_devices"}, "tf_device_kernel_image_invalid": {"device_kernel_image_invalid"}}

// specificFirst drops the hits that a narrower hit stands for.
func specificFirst(hits []gpu.SignatureHit) []gpu.SignatureHit {
	drop := map[string]bool{}
	for _, h := range hits {
		for _, id := range narrower[h.ID] {
			drop[id] = true
		}
	}
	return slices.DeleteFunc(hits, func(h gpu.SignatureHit) bool { return drop[h.ID] })
}

// torchRangeRE is the range of compute capabilities torch's warning says
// its build has kernels for: "Minimum and Maximum cuda capability
// supported by this version of PyTorch is (8.0) - (12.0)".
var torchRangeRE = regexp.MustCompile(`(?i)minimum and maximum cuda capability supported by this version of pytorch is\s*\((\d+\.\d+)\)\s*-\s*\((\d+\.\d+)\)`)

// torchRange is torchRangeRE's match in low (lower-cased text), or nil;
// the expression runs only around its words (a case-insensitive
// expression over a whole long paste costs more than the rest of the
// doctor).
func torchRange(low string) []string {
	const words = "cuda capability supported by this version of pytorch"
	i := strings.Index(low, words)
	if i < 0 {
		return nil
	}
	lo := max(0, i-60)
	return torchRangeRE.FindStringSubmatch(low[lo:min(len(low), i+len(words)+60)])
}

// torchCapability is the compute capability torch's "Found GPU0 … which
// is of cuda capability X" warning names (its signature's hit), or "".
func torchCapability(hits []gpu.SignatureHit) string {
	for _, h := range hits {
		if h.ID == "torch_gpu_too_old" {
			return h.Values["cc"]
		}
	}
	return ""
}

// torchCapabilityRange reads torch's "Found GPU0 … which is of cuda
// capability X" warning with the range it gives: a GPU above the range is
// too new for the build, not too old; and one above it within the same
// major version (12.1 against 12.0) runs the build's kernels for that
// major (a cubin for X.y runs on X.z, z ≥ y: CUDA's binary
// compatibility), so the warning alone proves nothing.
func torchCapabilityRange(hits []gpu.SignatureHit, text string) []gpu.SignatureHit {
	if torchCapability(hits) == "" {
		return hits
	}
	m := torchRange(asciiLower(text))
	out := make([]gpu.SignatureHit, 0, len(hits))
	for _, h := range hits {
		if h.ID != "torch_gpu_too_old" || h.Values["cc"] == "" {
			out = append(out, h)
			continue
		}
		if m != nil {
			cc, top := gpu.MustVersion(h.Values["cc"]), gpu.MustVersion(m[2])
			if cc != nil && top != nil && cc.Compare(top) > 0 {
				if cc.Major() == top.Major() {
					continue // a warning, not the cause
				}
				h.Title = "PyTorch says the GPU's compute capability (" + h.Values["cc"] + ") is newer than the build's kernels (up to " + m[2] + ")"
			}
		}
		out = append(out, h)
	}
	return out
}

// hasProblem: an error or a warning has been found.
func (j *judge) hasProblem() bool {
	for _, f := range j.out {
		if f.Severity == gpu.SevError || f.Severity == gpu.SevWarning {
			return true
		}
	}
	return false
}

// explainedBy adds an error text to a finding that explains its cause
// (a container started without GPUs explains a driver that cannot be
// reached).
func (j *judge) explainedBy(h gpu.SignatureHit) bool {
	for i := range j.out {
		f := &j.out[i]
		if slices.Contains(f.explains, h.Cause) && f.weight >= h.Strength {
			f.Evidence = append(f.Evidence, `the report's error, which this causes: "`+h.Line+`"`)
			return true
		}
	}
	return false
}

// joinSameCause adds an error text to a finding of the same cause, which
// it confirms; the finding's weight becomes the stronger of the two.
func (j *judge) joinSameCause(h gpu.SignatureHit) bool {
	for i := range j.out {
		f := &j.out[i]
		if f.Cause != h.Cause || f.Severity != gpu.SevError && f.Severity != gpu.SevWarning {
			continue
		}
		line := `the report's error: "` + h.Line + `"`
		if strings.HasPrefix(f.ID, "report_") {
			line = `report: "` + h.Line + `"`
		}
		if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, h.Line) }) {
			f.Evidence = append(f.Evidence, line)
		}
		f.weight = max(f.weight, h.Strength)
		return true
	}
	return false
}

// explainSymptom adds a symptom to the strongest finding of a cause that
// produces it; it reports whether there was one.
func (j *judge) explainSymptom(h gpu.SignatureHit) bool {
	causes := gpuUnusable
	if s, ok := catalog.Default().ByID(h.ID); ok && len(s.SymptomOf) > 0 {
		causes = nil
		for _, c := range s.SymptomOf {
			causes = append(causes, gpu.Cause(c))
		}
	}
	best := -1
	for i, f := range j.out {
		if !slices.Contains(causes, f.Cause) || f.Severity != gpu.SevError && f.Severity != gpu.SevWarning || f.weight <= h.Strength {
			continue
		}
		if best < 0 || f.weight > j.out[best].weight {
			best = i
		}
	}
	if best < 0 {
		return false
	}
	f := &j.out[best]
	f.Evidence = append(f.Evidence, `the report's error, which this causes: "`+h.Line+`"`)
	return true
}

// startedWithoutGPUs: the report's container start line (docker run,
// singularity exec) asks for no GPU, and the GPU fails inside.
func (j *judge) startedWithoutGPUs(failed, singularity bool) {
	p := j.f.Paste
	if p.DockerGPUs == nil || *p.DockerGPUs || !failed {
		return
	}
	if singularity {
		j.addExplaining(gpu.Finding{ID: "report_singularity_without_nv", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "The Singularity/Apptainer container was started without --nv, so the host's GPU and driver are not in it",
			Evidence: []string{`report: "` + p.DockerRun + `"`},
			Fix:      []gpu.Step{{Text: "Start it with --nv (it binds the host's NVIDIA driver and devices into the container):", Command: "singularity exec --nv image.sif nvidia-smi"}}},
			gpu.CauseDriverMissing, gpu.CauseDeviceSelection, gpu.CauseWSLOrContainer)
		return
	}
	j.addExplaining(gpu.Finding{ID: "report_container_without_gpus", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
		Title:    "The container was started without GPUs (no --gpus), so nothing inside it can use one",
		Evidence: []string{`report: "` + p.DockerRun + `"`},
		Fix: []gpu.Step{{Text: "Start it with the GPUs (the NVIDIA Container Toolkit on the host provides them):", Command: "docker run --gpus all ..."},
			{Text: "Check the toolkit on the host:", Command: "docker run --rm --gpus all ubuntu nvidia-smi"}}},
		gpu.CauseDriverMissing, gpu.CauseDeviceSelection, gpu.CauseWSLOrContainer)
}

// reportSituations judges what a report shows of the machine around the
// framework: a container started without GPUs, a Colab runtime without
// one, WSL without its driver library.
func (j *judge) reportSituations() {
	p, f := j.f.Paste, j.f
	failed := j.gpuFailed()
	j.noDriverBehindTooOld()
	singularity := singularityRE.MatchString(p.DockerRun)
	j.startedWithoutGPUs(failed, singularity)
	// A container the report only mentions (no start line with or without
	// GPUs, a Colab runtime) does not explain a failure that an error text
	// already pins on the software: a CPU-only build, clashing installs, a
	// GPU the build lacks kernels for, a driver too old for it.
	// But nvidia-smi failing inside the container is not the software's
	// doing: no build makes the driver's own tool go missing.
	// Nor one the program's own setting explains (DEVICE: 'cpu').
	// (cpuAsked, the dearest check, is tried last in each rule below.)
	inferred := failed && (!j.softwareExplains() || j.reading().quote(smiFailsRE) != "")
	// The toolkit's own hook failing to find the host's driver happens
	// before the container exists: nothing was left out of it.
	if p.DockerGPUs != nil && *p.DockerGPUs && !singularity && j.hitAtLeast(gpu.CauseDriverMissing, catalog.Medium) && f.Host.WSL == 0 && !j.hitID("container_toolkit_host_driver_not_loaded") {
		j.out = append(j.out, scored{Finding: gpu.Finding{ID: "report_container_driver_not_injected", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "The container gets the GPU but not the driver's CUDA library: the image does not ask for the compute capability, or the toolkit did not mount it",
			Evidence: []string{`report: "` + p.DockerRun + `"`},
			Fix: []gpu.Step{{Text: "Ask for the driver's compute and utility parts (images not based on nvidia/cuda lack this):", Command: "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ..."},
				{Text: "And check that libcuda is there inside the container:", Command: "ldconfig -p | grep libcuda"}}},
			weight: catalog.Medium, explains: []gpu.Cause{gpu.CauseDriverMissing}})
	}
	if f.Host.WSL > 0 && failed && j.noDriverSeen() {
		// The driver's own libraries failing on WSL are WSL's doing; a
		// framework's missing CUDA libraries may not be.
		w := catalog.Medium
		for _, h := range p.Signatures {
			if h.Cause == gpu.CauseDriverMissing || strings.Contains(h.Line, "libcuda.so") || strings.Contains(h.Line, "libnvidia-ml") {
				w = catalog.Strong
			}
		}
		j.addExplainingWeighted(w, gpu.Finding{ID: "report_wsl_gpu_unreachable", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "On WSL the GPU comes from the Windows driver, and it does not reach this Linux",
			Evidence: quoteLines(p.Quotes["os"]),
			Fix: []gpu.Step{{Text: "Use WSL 2 with the NVIDIA driver installed on Windows only (remove any Linux NVIDIA driver inside WSL), update WSL, then check from inside it:", Command: "wsl --update && wsl --shutdown"},
				{Text: "Inside WSL, the driver's libraries live in /usr/lib/wsl/lib; they must be on the loader's path:", Command: "ls -l /usr/lib/wsl/lib/libcuda.so* && nvidia-smi"}}},
			gpu.CauseDriverMissing, gpu.CauseDeviceSelection, gpu.CauseCudnnProblem)
	}
	if f.Host.Container == "container" && j.noDriverSeen() && j.reading().quote(driverInBoxRE) != "" {
		q := j.reading().quote(driverInBoxRE)
		// A container uses the host's driver: one installed inside it
		// shadows the host's libraries (NVML's version mismatch) or does
		// nothing at all.
		j.addExplainingWeighted(catalog.Strong, gpu.Finding{ID: "report_driver_inside_container", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "An NVIDIA driver was installed inside the container, which must use the host's driver",
			Evidence: []string{`report: "` + q + `"`},
			Fix:      []gpu.Step{{Text: "Remove the driver packages from the container (or rebuild the image without them), keep the driver on the host only, and start the container with --gpus; check inside it:", Command: "docker run --rm --gpus all IMAGE nvidia-smi"}}},
			gpu.CauseDriverMissing)
		return
	}
	if f.Host.Container == "container" && (p.DockerGPUs == nil || !*p.DockerGPUs) && inferred && j.noDriverSeen() && f.Host.WSL == 0 && !j.hostStateNamed() && j.reading().gpuRental() == "" && !j.cpuAsked() {
		ev := quoteLines(p.Quotes["os"])
		j.out = append(j.out, scored{Finding: gpu.Finding{ID: "report_container_gpu_unreachable", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "The program runs in a container that does not get the GPU",
			Evidence: ev,
			Fix: []gpu.Step{{Text: "Start the container with the GPUs (the NVIDIA Container Toolkit on the host provides the driver's files and devices):", Command: "docker run --gpus all ..."},
				{Text: "With Compose, reserve the GPU for the service (deploy.resources.reservations.devices: driver nvidia, capabilities [gpu]); check the host's toolkit:", Command: "docker run --rm --gpus all ubuntu nvidia-smi"}}},
			weight: catalog.Medium, explains: []gpu.Cause{gpu.CauseDriverMissing, gpu.CauseDeviceSelection}})
	}
	if p.Scheduler == "slurm" && failed && j.noDriverSeen() {
		j.out = append(j.out, scored{Finding: gpu.Finding{ID: "report_job_without_gpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
			Title:    "The job runs under Slurm: a job sees only the GPUs it requested, and this one got none",
			Evidence: quoteLines(p.Quotes["env"]),
			Fix: []gpu.Step{{Text: "Request the GPUs in the job (on a GPU partition), then check inside the job:", Command: "srun --gres=gpu:1 --pty nvidia-smi"},
				{Text: "In a batch script: #SBATCH --gres=gpu:1 (or --gpus=1), and do not override CUDA_VISIBLE_DEVICES, which Slurm sets."}}},
			weight: catalog.Medium, explains: []gpu.Cause{gpu.CauseDriverMissing, gpu.CauseDeviceSelection}})
	}
	if (f.Host.Container == "colab" || f.Host.Container == "hosted") && inferred && j.noDriverSeen() && !j.gpuSession() && !j.cpuAsked() {
		j.addExplainingWeighted(catalog.Medium, gpu.Finding{ID: "report_colab_no_gpu_runtime", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "The notebook runs on a Colab runtime without a GPU",
			Evidence: quoteLines(p.Quotes["os"]),
			Fix:      []gpu.Step{{Text: "In Colab: Runtime → Change runtime type → Hardware accelerator: GPU (T4), then run the notebook again. Check it with:", Command: "!nvidia-smi"}}},
			gpu.CauseDriverMissing, gpu.CauseDeviceSelection, gpu.CauseWSLOrContainer)
	} else if inferred && j.noDriverSeen() && j.f.Host.Container == "" && f.Host.WSL == 0 && !j.cpuAsked() {
		j.reportHostedOrServerless()
	}
}

// reportHostedOrServerless: a failure on no container or WSL that a
// hosted notebook's session without a GPU, or a serverless platform,
// explains.
func (j *judge) reportHostedOrServerless() {
	if q := j.hostedNotebook(); q != "" && !j.gpuSession() {
		// Another notebook service (Kaggle, SageMaker, Paperspace, ...):
		// no driver to install there; its session has no GPU.
		j.addExplainingWeighted(catalog.Medium, gpu.Finding{ID: "report_hosted_no_gpu_runtime", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "The notebook runs on a hosted service whose session has no GPU",
			Evidence: []string{`report: "` + q + `"`},
			Fix:      []gpu.Step{{Text: "Start the session with a GPU (Kaggle: Settings → Accelerator → GPU; SageMaker, Paperspace, Lightning: a GPU instance type), then check it in the notebook:", Command: "!nvidia-smi"}}},
			gpu.CauseDriverMissing, gpu.CauseDeviceSelection, gpu.CauseWSLOrContainer)
		return
	}
	j.reportServerless()
}

// reportServerless: a serverless or app platform (AWS Lambda, Cloud
// Functions, Heroku) runs code on CPUs only, so no driver is there to
// find. Its words are read only for a failure that nothing else explains.
func (j *judge) reportServerless() {
	q := j.serverless()
	if q == "" {
		return
	}
	j.addExplainingWeighted(catalog.Medium, gpu.Finding{ID: "report_serverless_no_gpu", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
		Title:    "The program runs on a serverless or app platform, which has no GPU",
		Evidence: []string{`report: "` + q + `"`},
		Fix:      []gpu.Step{{Text: "Run it on the CPU there, or move it to a GPU instance or a GPU inference service; on any machine, check for a GPU with:", Command: "nvidia-smi -L"}}},
		gpu.CauseDriverMissing, gpu.CauseDeviceSelection)
}

// noDriverBehindTooOld: a framework's "driver too old" or "driver
// insufficient" error beside an nvidia-smi that does not answer (not
// found, cannot communicate) and no driver version anywhere: there is no
// driver at all, and the framework reads its absence as version 0.
// Inside a container or WSL the driver comes from outside, and their own
// rules judge it.
func (j *judge) noDriverBehindTooOld() {
	f := j.f
	if !j.noDriverSeen() || f.NVML.DriverVersion != "" || f.Host.Container != "" || f.Host.WSL > 0 || !j.hitOf(gpu.CauseDriverTooOld) {
		return
	}
	r := j.reading()
	q := r.quote(smiFailsRE)
	if q == "" || strings.Contains(asciiLower(q), "no devices were found") || r.quote(smiWorksRE) != "" {
		return
	}
	j.addExplainingWeighted(catalog.Strong, gpu.Finding{ID: "report_no_driver_behind_too_old", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
		Title:    "No NVIDIA driver answers at all: the framework's \"driver too old\" is its reading of no driver (version 0)",
		Evidence: []string{`report: "` + q + `"`},
		Fix:      []gpu.Step{{Text: "Install the NVIDIA driver for the GPU (Ubuntu: sudo ubuntu-drivers install; Windows: the driver from nvidia.com), restart, then check that it answers:", Command: "nvidia-smi"}}},
		gpu.CauseDriverTooOld)
}

// serverless is the report's line that names a serverless or app
// platform (not Lambda Labs, a GPU cloud), or "".
func (j *judge) serverless() string {
	r := j.reading()
	if r.any("lambda labs", "lambdalabs", "lambda cloud") {
		return ""
	}
	return r.quote(serverlessRE)
}

// hostedNotebook is the report's line that names a hosted notebook
// service it runs on (not one it says the program worked on), or "".
func (j *judge) hostedNotebook() string {
	q := j.reading().quote(hostedRE)
	if q != "" && strings.Contains(j.f.Paste.Prose["hosted_worked"], q) {
		return ""
	}
	if q == "" {
		// A session said to have no GPU (no accelerator, a CPU or TPU
		// runtime) is a hosted notebook's, whichever service.
		q = j.reading().quote(noGPURuntimeRE)
	}
	return q
}

var singularityRE = regexp.MustCompile(`\b(?:singularity|apptainer)\s`)

// softwareExplains: an error text of at least medium strength pins the
// failure on the installed software rather than on the GPU's reach.
func (j *judge) softwareExplains() bool {
	for _, h := range j.f.Paste.Signatures {
		if h.Strength < catalog.Medium {
			continue
		}
		switch h.Cause {
		case gpu.CauseCPUOnlyBuild, gpu.CauseConflictingInstalls, gpu.CauseArchUnsupported, gpu.CauseDriverTooOld, gpu.CauseTFGPULibs:
			return true
		}
	}
	return j.reading().quote(cpuImageRE) != "" // an image said to be a CPU build
}

// gpuFailed: the report shows that CUDA or the driver could not be used.
func (j *judge) gpuFailed() bool {
	p := j.f.Paste
	if p.CUDAAvailable != nil && !*p.CUDAAvailable {
		return true
	}
	for _, h := range p.Signatures {
		if slices.Contains(gpuUnusable, h.Cause) {
			return true
		}
	}
	return slices.Contains(p.Devices, "cpu") && !slices.Contains(p.Devices, "gpu")
}

// hitOf: the report holds an error text of cause c.
func (j *judge) hitOf(c gpu.Cause) bool {
	for _, h := range j.f.Paste.Signatures {
		if h.Cause == c {
			return true
		}
	}
	return false
}

// hitAtLeast: the report holds an error text of cause c of at least
// strength w (a weak one may be another cause's symptom: error 804 is
// mostly a driver older than the container's CUDA).
func (j *judge) hitAtLeast(c gpu.Cause, w int) bool {
	for _, h := range j.f.Paste.Signatures {
		if h.Cause == c && h.Strength >= w {
			return true
		}
	}
	return false
}

// hitID: the report holds the error text of the signature with this id.
func (j *judge) hitID(id string) bool {
	for _, h := range j.f.Paste.Signatures {
		if h.ID == id {
			return true
		}
	}
	return false
}

// noDriverSeen: the report shows no working driver (no nvidia-smi table).
func (j *judge) noDriverSeen() bool {
	return j.f.NVML.Status != gpu.NVMLOK
}

func quoteLines(qs []string) []string {
	var out []string
	for _, q := range qs {
		out = append(out, `report: "`+q+`"`)
	}
	return out
}

// quoteEvidence adds the report's own lines to each finding they prove.
func (j *judge) quoteEvidence() {
	p := j.f.Paste
	if p == nil {
		return
	}
	for i := range j.out {
		f := &j.out[i]
		if f.Severity == gpu.SevOK || f.Severity == gpu.SevInfo {
			continue
		}
		for _, kind := range quoteKinds[f.Cause] {
			for _, q := range p.Quotes[kind] {
				if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, q) }) {
					f.Evidence = append(f.Evidence, `report: "`+q+`"`)
				}
			}
		}
	}
}

// runNext says which commands would settle what the report leaves open. A
// text that holds a known error line or a known format is never "nothing
// recognised".
func (j *judge) runNext() {
	f, p := j.f, j.f.Paste
	var steps []gpu.Step
	var missing []string
	_, hasTorch := j.reportTorch()
	torchInvolved := hasTorch || p.CUDAAvailable != nil || j.hasProblem()
	if torchInvolved && !j.torchKnown() {
		missing = append(missing, "which PyTorch build runs")
		steps = append(steps, gpu.Step{Text: "Which PyTorch build runs, and what it sees:", Command: nextTorch})
	}
	switch {
	case j.driverVersion() == "" && j.driverCUDA() == "":
		missing = append(missing, "the driver")
		steps = append(steps, gpu.Step{Text: "The driver and the CUDA version it supports, and the GPUs:", Command: nextSMI})
	case len(f.NVML.GPUs) == 0:
		missing = append(missing, "the GPU model")
		steps = append(steps, gpu.Step{Text: "The GPUs:", Command: "nvidia-smi -L"})
	}
	recognised := len(p.Formats) > 0 || len(f.Pythons) > 0 || len(f.NVML.GPUs) > 0 || len(p.Signatures) > 0
	j.runDifferential()
	if !recognised {
		j.addWeighted(gpu.Finding{ID: "report_nothing_recognised", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
			Title:    "The text holds no report this doctor knows (collect_env, nvidia-smi, nvcc, Ultralytics, TensorFlow, a traceback)",
			Evidence: []string{plural.Count(p.Lines, "line") + " read"},
			Fix:      append(steps, gpu.Step{Text: "Or, best, run the full check on that machine and paste its output:", Command: nextFull})}, catalog.Weak)
		return
	}
	if len(missing) == 0 {
		return
	}
	j.addWeighted(gpu.Finding{ID: "report_run_next", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    "The report does not show " + strings.Join(missing, " or ") + "; to be sure, run these on that machine",
		Evidence: []string{"recognised in the report: " + recognisedParts(p)},
		Fix:      append(steps, gpu.Step{Text: "Or run the full check there:", Command: nextFull})}, catalog.Weak)
}

func (j *judge) reportTorch() (gpu.Package, bool) {
	for _, e := range j.f.Pythons {
		if pk, ok := e.Package("torch"); ok {
			return pk, true
		}
	}
	return gpu.Package{}, false
}

// torchKnown: the report shows torch's version and whether it is a CUDA build.
func (j *judge) torchKnown() bool {
	pk, ok := j.reportTorch()
	return ok && pk.Version != "(version not shown)" && (pk.CPUOnly || pk.CUDA != "" || pk.ROCm != "")
}

func recognisedParts(p *gpu.PasteFacts) string {
	parts := append([]string{}, p.Formats...)
	if len(p.Signatures) > 0 {
		parts = append(parts, "error messages")
	}
	if len(parts) == 0 {
		return "nothing but prose"
	}
	return strings.Join(parts, ", ")
}

var cudnnWantRE = regexp.MustCompile(`libcudnn[a-z_]*\.so\.(\d+)`)

// cudnnMismatch compares the cuDNN a failing program wants with the ones
// the report lists.
func (j *judge) cudnnMismatch(line string) []string {
	m := cudnnWantRE.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	var have []string
	majors := map[string]bool{}
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == "libcudnn" {
			major := strconv.Itoa(gpu.MustVersion(l.Version).Major())
			if !majors[major] {
				majors[major] = true
				have = append(have, l.Soname)
			}
		}
	}
	if len(have) == 0 || majors[m[1]] {
		return nil
	}
	return []string{fmt.Sprintf("the program wants cuDNN %s, but the report's library list has only %s: install cuDNN %s beside it (or a build of the program for the cuDNN you have)", m[1], strings.Join(have, ", "), m[1])}
}

// hostStateIDs are error texts that name what broke the host's own driver
// (a suspend, Secure Boot): a container on that host fails for the host's
// reason, not for being a container.
var hostStateIDs = []string{"cuda_broken_after_suspend_in_words", "installer_secure_boot_module_failed", "modprobe_key_rejected_secure_boot", "secure_boot_enabled_in_words"}

func (j *judge) hostStateNamed() bool {
	return slices.ContainsFunc(hostStateIDs, j.hitID)
}

// cpuAsked: the report shows the program told to use the CPU.
func (j *judge) cpuAsked() bool { return j.reading().quote(cpuAskedRE) != "" }

// gpuSession: the report says its notebook or cloud session has a GPU,
// or shows torch seeing one.
func (j *judge) gpuSession() bool {
	return j.torchSawGPU() || j.reading().quote(gpuSessionRE) != ""
}
