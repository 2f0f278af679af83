package watch

import (
	"fmt"
	"strconv"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// doctorFindings are the doctor's findings of at least severity sev that
// no watch finding stands for yet.
func (v *view) doctorFindings(used map[string]bool, sev gpu.Severity) []gpu.Finding {
	if v.diag == nil {
		return nil
	}
	var out []gpu.Finding
	for _, f := range v.diag.Findings {
		if used[f.ID] || f.Severity.Rank() > sev.Rank() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// noUsableGPU: NVML answers with no GPU, or does not answer. The reason is
// "no NVIDIA GPU on this machine" when PCI shows none, otherwise the
// doctor's first finding about the driver.
func (v *view) noUsableGPU(used map[string]bool) (bool, finding) {
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		return false, finding{}
	}
	nvEv := "NVML: " + v.nvml
	if v.nvmlErr != "" {
		nvEv = "NVML: " + v.nvmlErr
	}
	if v.nvml == gpu.NVMLOK {
		nvEv = "NVML: the driver answers but lists no GPU"
	}
	ev := []string{nvEv}
	ev = append(ev, v.loadedEvidence()...)
	if v.pciNone() {
		ev = append([]string{"no PCI display device with vendor 0x10de in /sys/bus/pci/devices"}, ev...)
		fix := []gpu.Step{
			{Text: "Training can only run on the CPU here; it works, slowly. For GPU training use a machine or cloud instance with an NVIDIA GPU."}}
		if v.facts != nil && v.facts.Host.Container != "" {
			ev = append(ev, "inside a "+v.facts.Host.Container+" container")
			fix = append(fix, gpu.Step{Text: "If the host does have an NVIDIA GPU, start this container with it (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."})
		}
		return true, finding{Finding: gpu.Finding{ID: "watch_no_gpu", Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title: "Runs on the CPU: there is no NVIDIA GPU on this machine", Evidence: ev, Fix: fix},
			reason: "no NVIDIA GPU on this machine"}
	}
	// The doctor's own finding about the driver layer.
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Severity != gpu.SevError {
				continue
			}
			switch d.Cause {
			case gpu.CauseDriverMissing, gpu.CauseWSLOrContainer, gpu.CauseOther:
				used[d.ID] = true
				reason := "no usable GPU: " + lowerFirst(strings.TrimSuffix(d.Title, "."))
				return true, finding{Finding: gpu.Finding{ID: "watch_no_usable_gpu", Cause: d.Cause, Severity: gpu.SevError,
					Title:    "Runs on the CPU: " + d.Title,
					Evidence: append(append(ev, d.Evidence...), "gpuwizard doctor: "+d.ID),
					Fix:      d.Fix}, reason: reason}
			}
		}
	}
	return true, finding{Finding: gpu.Finding{ID: "watch_no_usable_gpu", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
		Title: "Runs on the CPU: no GPU answers through NVML", Evidence: ev,
		Fix: []gpu.Step{{Text: "See what the doctor finds:", Command: "gpuwizard doctor"}}},
		reason: "no usable GPU (NVML: " + v.nvml + ")"}
}

// pciNone: the machine's PCI bus was read and holds no NVIDIA GPU (and it
// is not WSL, whose GPU is not on a PCI bus Linux sees).
func (v *view) pciNone() bool {
	f := v.facts
	if f == nil || f.Host.WSL > 0 {
		return false
	}
	if st, ok := f.Source("pci"); !ok || !st.OK {
		return false
	}
	for _, d := range f.PCI {
		if d.IsGPU() {
			return false
		}
	}
	return true
}

// loadedEvidence names the frameworks' libraries the process has loaded.
func (v *view) loadedEvidence() []string {
	var ev []string
	for _, fw := range v.frameworks {
		s := fmt.Sprintf("loaded: %s (%s", fw.Evidence, fw.Name)
		if fw.Version != "" {
			s += " " + fw.Version
		}
		s += ", " + buildWords(fw.Build) + ")"
		ev = append(ev, s)
	}
	return ev
}

func buildWords(b string) string {
	switch b {
	case "cpu":
		return "CPU-only build"
	case "cuda":
		return "CUDA build"
	case "rocm":
		return "ROCm build"
	}
	return "build unknown"
}

func (v *view) permissionFinding(noGPU bool) finding {
	cmd := fmt.Sprintf("gpuwizard watch %d", v.pid)
	ev := []string{fmt.Sprintf("%s: permission denied (the process belongs to %s)", v.mapsName(), v.user)}
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		ev = append(ev, fmt.Sprintf("NVML lists PID %d (and its children) on no GPU (it sees %s)", v.pid, plural.Count(len(v.last.devs), "GPU")))
	}
	if c := strings.Join(v.id.cmdline, " "); c != "" {
		ev = append(ev, "cmdline: "+gpu.Sanitize(c))
	}
	sev, reason := gpu.SevError, fmt.Sprintf("Cannot tell where process %d runs: it belongs to %s, and its libraries and environment cannot be read (permission denied)", v.pid, v.user)
	if v.nvml == gpu.NVMLOK && len(v.last.devs) > 0 {
		reason += "; NVML does not list it on any GPU"
	}
	if noGPU {
		sev = gpu.SevInfo // the machine has no GPU: it runs on the CPU whatever it loaded
	}
	return finding{Finding: gpu.Finding{ID: "watch_permission", Cause: gpu.CauseOther, Severity: sev,
		Title:    fmt.Sprintf("Process %d belongs to %s: its libraries and environment cannot be read (permission denied)", v.pid, v.user),
		Evidence: ev,
		Fix: []gpu.Step{{Text: "Watch it as its user:", Command: fmt.Sprintf("sudo -u %s %s", gpu.ShellQuote(v.user), cmd)},
			{Text: "Or as root:", Command: "sudo " + cmd}}}, reason: reason}
}

// cpuOnlyBuild: the framework loaded is built without CUDA.
func (v *view) cpuOnlyBuild(noGPU bool, used map[string]bool) (finding, bool) {
	var fw Framework
	found := false
	for _, f := range v.frameworks {
		if f.Build == "cpu" || f.Build == "rocm" {
			fw, found = f, true
			break
		}
	}
	if !found {
		return finding{}, false
	}
	name := fw.Name
	if fw.Version != "" {
		name += " " + fw.Version
	}
	ev := []string{"loaded: " + fw.Evidence}
	switch fw.Name {
	case "torch":
		if fw.Build == "rocm" {
			ev = append(ev, "libtorch_hip.so: a ROCm build, for AMD GPUs")
		} else {
			ev = append(ev, "no torch CUDA library (libtorch_cuda.so, torch_cuda.dll) in "+v.mapsName()+": torch has no CUDA part")
		}
	case "jax":
		ev = append(ev, "no JAX CUDA plugin loaded")
	}
	if v.interp != nil {
		for _, pk := range v.interp.Packages {
			if pk.Name == fw.Name && pk.BuildNote != "" && (fw.Location == "" || pk.Location == fw.Location) {
				ev = append(ev, fmt.Sprintf("%s: %s (%s)", v.interp.Interpreter, pk.BuildNote, pk.Location))
				break
			}
		}
	}
	what := "a CPU-only build"
	if fw.Build == "rocm" {
		what = "a ROCm (AMD) build"
	}
	f := gpu.Finding{ID: "watch_cpu_only_build", Cause: gpu.CauseCPUOnlyBuild, Severity: gpu.SevError, Evidence: ev}
	if noGPU {
		f.Severity = gpu.SevInfo
		f.Title = fmt.Sprintf("%s, %s, is loaded (right for this machine, which has no usable GPU)", name, what)
		return finding{Finding: f, reason: fmt.Sprintf("%s of %s is loaded", what, name)}, true
	}
	f.Title = fmt.Sprintf("%s, %s, is loaded: it can never use the GPU", name, what)
	// The doctor's wheel advice for this interpreter is the fix.
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Cause == gpu.CauseCPUOnlyBuild && !used[d.ID] && len(d.Fix) > 0 {
				used[d.ID] = true
				f.Fix = d.Fix
				break
			}
		}
	}
	if len(f.Fix) == 0 {
		f.Fix = v.genericBuildFix(fw)
	}
	return finding{Finding: f, reason: fmt.Sprintf("%s of %s is loaded", what, name)}, true
}

func (v *view) python() string {
	if v.interp != nil {
		return gpu.ShellQuote(v.interp.Interpreter)
	}
	return "python"
}

func (v *view) genericBuildFix(fw Framework) []gpu.Step {
	py := v.python()
	switch fw.Name {
	case "tensorflow":
		return []gpu.Step{{Text: "Install TensorFlow with its CUDA libraries (Linux and WSL 2):", Command: py + ` -m pip install "tensorflow[and-cuda]"`}}
	case "jax":
		return []gpu.Step{{Text: "Install JAX with its CUDA plugin:", Command: py + ` -m pip install -U "jax[cuda12]"`}}
	}
	return []gpu.Step{{Text: "Install a CUDA build of torch into this interpreter (see gpuwizard doctor for the newest wheel this driver runs):",
		Command: py + " -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126"}}
}

// visibleDevices: CUDA_VISIBLE_DEVICES in the process's environment hides
// every GPU NVML sees (CUDA stops at the first entry it cannot match).
func (v *view) visibleDevices() (finding, bool) {
	val, set := v.id.environ["CUDA_VISIBLE_DEVICES"]
	if !set {
		return finding{}, false
	}
	for _, tok := range strings.Split(val, ",") {
		tok = strings.TrimSpace(tok)
		if matchDevice(v.last.devs, tok) {
			return finding{}, false // the first entry names a GPU
		}
		break
	}
	shown := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", val)
	why := "it is set but empty"
	switch {
	case strings.TrimSpace(val) == "-1":
		why = "-1 hides every GPU (Ultralytics sets it for device=cpu)"
	case strings.TrimSpace(val) != "":
		why = fmt.Sprintf("%q matches no GPU (NVML sees %s)", strings.Split(val, ",")[0], plural.Count(len(v.last.devs), "GPU"))
	}
	cmd := strings.Join(quoteAll(v.id.cmdline), " ")
	if cmd == "" {
		cmd = "python train.py"
	}
	return finding{Finding: gpu.Finding{ID: "watch_visible_devices_hide_gpus", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
		Title:    "CUDA_VISIBLE_DEVICES in the process's environment hides every GPU: " + why,
		Evidence: v.visibleEvidence(shown),
		Fix: []gpu.Step{{Text: "Start it without the variable:", Command: "env -u CUDA_VISIBLE_DEVICES " + cmd},
			{Text: "Or name the GPU to use:", Command: "CUDA_VISIBLE_DEVICES=0 " + cmd},
			{Text: "Look for where it is set: ~/.bashrc, the IDE's run configuration, a launcher script, or os.environ in the code."}}},
		reason: fmt.Sprintf("%s hides every GPU", shown)}, true
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = gpu.ShellQuote(gpu.Sanitize(a))
	}
	return out
}

// matchDevice reports whether a CUDA_VISIBLE_DEVICES entry names a GPU:
// an index, or a (prefix of a) GPU or MIG UUID.
func matchDevice(devs []device, tok string) bool {
	if tok == "" {
		return false
	}
	if n, err := strconv.Atoi(tok); err == nil {
		for _, d := range devs {
			if d.Index == n {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(tok, "MIG-") {
		return len(devs) > 0
	}
	want := strings.TrimPrefix(strings.ToUpper(tok), "GPU-")
	for _, d := range devs {
		have := strings.TrimPrefix(strings.ToUpper(d.UUID), "GPU-")
		if have != "" && strings.HasPrefix(have, want) {
			return true
		}
	}
	return false
}

// cpuArg is a command-line choice of the CPU: the argument (with its
// value when separate) and what asks for the GPU instead ("" drops it).
type cpuArg struct {
	match func(low, next string) (int, bool) // the arguments it spans
	fix   func(arg string) []string
}

// cpuArgs are the ways command lines ask for the CPU: Ultralytics'
// device=cpu, scripts' --device cpu and -d cpu, Lightning's --accelerator
// cpu and gpus=0, Hugging Face's --no_cuda and --use_cpu, --cpu.
var cpuArgs = []cpuArg{
	{func(l, _ string) (int, bool) {
		return 1, l == "device=cpu" || l == "device='cpu'" || l == `device="cpu"`
	}, func(string) []string { return []string{"device=0"} }},
	{func(l, _ string) (int, bool) { return 1, l == "--device=cpu" }, func(string) []string { return []string{"--device=cuda"} }},
	{func(l, n string) (int, bool) { return 2, (l == "--device" || l == "-d") && n == "cpu" }, func(a string) []string { return []string{a, "cuda"} }},
	{func(l, _ string) (int, bool) { return 1, l == "-d=cpu" }, func(string) []string { return []string{"-d=cuda"} }},
	{func(l, n string) (int, bool) { return 2, l == "--accelerator" && n == "cpu" }, func(a string) []string { return []string{a, "gpu"} }},
	{func(l, _ string) (int, bool) {
		return 1, l == "--accelerator=cpu" || l == "accelerator=cpu" || l == "trainer.accelerator=cpu" || l == "--trainer.accelerator=cpu"
	}, func(a string) []string {
		return []string{strings.TrimSuffix(a, a[strings.LastIndexByte(a, '=')+1:]) + "gpu"}
	}},
	{func(l, n string) (int, bool) { return 2, l == "--gpus" && n == "0" }, func(a string) []string { return []string{a, "1"} }},
	{func(l, _ string) (int, bool) { return 1, l == "--gpus=0" || l == "gpus=0" || l == "trainer.gpus=0" }, func(a string) []string { return []string{strings.TrimSuffix(a, "0") + "1"} }},
	{func(l, _ string) (int, bool) {
		switch strings.TrimSuffix(strings.TrimSuffix(l, "=true"), "=1") {
		case "--no_cuda", "--no-cuda", "--use_cpu", "--use-cpu", "--cpu", "--cpu-only", "--cpu_only", "--force-cpu", "--force_cpu":
			return 1, true
		}
		return 1, false
	}, func(string) []string { return nil }},
}

// commandAsksCPU: the command line chooses the CPU.
func (v *view) commandAsksCPU() (finding, bool) {
	args := v.id.cmdline
	for i := 1; i < len(args); i++ {
		low := strings.ToLower(strings.Trim(args[i], `"'`))
		next := ""
		if i+1 < len(args) {
			next = strings.ToLower(strings.Trim(args[i+1], `"'`))
		}
		for _, c := range cpuArgs {
			n, ok := c.match(low, next)
			if !ok {
				continue
			}
			arg := strings.Join(args[i:i+n], " ")
			fixed := append(append(append([]string(nil), args[:i]...), c.fix(args[i])...), args[i+n:]...)
			fixText := "Ask for the GPU instead:"
			if c.fix(args[i]) == nil {
				fixText = "Leave the option out:"
			}
			return finding{Finding: gpu.Finding{ID: "watch_command_asks_cpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
				Title:    fmt.Sprintf("The command line asks for the CPU (%s)", gpu.Sanitize(arg)),
				Evidence: []string{fmt.Sprintf("%s: %s", v.where(v.id.pid, "cmdline"), gpu.Sanitize(strings.Join(args, " ")))},
				Fix:      []gpu.Step{{Text: fixText, Command: strings.Join(quoteAll(fixed), " ")}}},
				reason: fmt.Sprintf("the command line asks for it (%s)", gpu.Sanitize(arg))}, true
		}
	}
	return finding{}, false
}

// tfName is "TensorFlow 2.15.0", or "TensorFlow" when the version is unknown.
func tfName(fw Framework) string {
	if fw.Version == "" {
		return "TensorFlow"
	}
	return "TensorFlow " + fw.Version
}

// tfWithoutCUDA: a CUDA build of TensorFlow runs without any of its CUDA
// libraries loaded: it found none and fell back to the CPU.
func (v *view) tfWithoutCUDA(used map[string]bool) (finding, bool) {
	fw, ok := v.framework("tensorflow")
	if !ok || (fw.Build != "cuda" && fw.Build != "unknown") || v.libs.has(LibCUDART) || v.libs.has(LibCuBLAS) || v.libs.has(LibCuDNN) {
		return finding{}, false
	}
	ev := []string{"loaded: " + fw.Evidence}
	if fw.Build == "cuda" {
		ev = append(ev, fmt.Sprintf("TensorFlow %s is built for CUDA %s", fw.Version, gpu.OrUnknown(fw.CUDA)))
	} else {
		ev = append(ev, "its build is unknown (the interpreter's package files were not found): a CPU-only build, or one that could not load its CUDA libraries")
	}
	ev = append(ev, "no libcudart, libcublas or libcudnn in "+v.mapsName())
	if ld, ok := v.id.environ["LD_LIBRARY_PATH"]; ok {
		ev = append(ev, "LD_LIBRARY_PATH="+ld)
	} else if v.id.environ != nil {
		ev = append(ev, "LD_LIBRARY_PATH is not set")
	}
	f := gpu.Finding{ID: "watch_tf_without_cuda_libs", Cause: gpu.CauseTFGPULibs, Severity: gpu.SevError,
		Title:    tfName(fw) + " is loaded but none of its CUDA libraries are: it found no GPU and runs on the CPU",
		Evidence: ev}
	if v.diag != nil {
		for _, d := range v.diag.Findings {
			if d.Cause == gpu.CauseTFGPULibs && !used[d.ID] {
				used[d.ID] = true
				f.Evidence = append(f.Evidence, d.Evidence...)
				f.Fix = d.Fix
				break
			}
		}
	}
	if len(f.Fix) == 0 {
		f.Fix = v.genericBuildFix(fw)
	}
	f.Fix = append(f.Fix, gpu.Step{Text: "See what TensorFlow finds, and the libraries it could not load:",
		Command: v.python() + ` -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"`})
	return finding{Finding: f, reason: "TensorFlow could not load its CUDA libraries"}, true
}

// cudaSeesNoGPU: CUDA started (the driver's library is loaded and the
// driver's control file open) but opened no GPU's device file: it was told
// to see none, by CUDA_VISIBLE_DEVICES set inside the program (which the
// environment the process started with does not show) or a device that
// does not exist. When the environment names the variable,
// visibleDevices says so instead.
func (v *view) cudaSeesNoGPU() (finding, bool) {
	l, ok := v.libs.first(LibCUDA)
	if !ok || !v.devRead || v.wsl || !v.dev.has(devCtl) || len(v.dev.gpuNodes()) > 0 || len(v.last.devs) == 0 {
		return finding{}, false
	}
	if _, set := v.id.environ["CUDA_VISIBLE_DEVICES"]; set {
		return finding{}, false
	}
	ev := []string{"loaded: " + l.Path + ": CUDA was initialised",
		"device: " + devCtl + " is open, and no /dev/nvidiaN: CUDA found no GPU it may use"}
	ev = append(ev, v.nvmlNotListed()...)
	ev = append(ev, fmt.Sprintf("%s: CUDA_VISIBLE_DEVICES is not set there", v.where(v.id.pid, "environ")))
	return finding{Finding: gpu.Finding{ID: "watch_cuda_sees_no_gpu", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
		Title:    "CUDA started but opened no GPU: it was told to see none (CUDA_VISIBLE_DEVICES set inside the program?)",
		Evidence: ev,
		Fix: []gpu.Step{{Text: "Look for os.environ[\"CUDA_VISIBLE_DEVICES\"] (or a config that sets it) in the code: the environment the process was started with does not show it. Remove it or name a GPU that exists."},
			{Text: "Check what torch sees from this interpreter:", Command: v.python() + ` -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"`}}},
		reason: "CUDA started but sees no GPU (CUDA_VISIBLE_DEVICES set inside the program?)"}, true
}

// cudaUnused: CUDA libraries are loaded, the process is past its setup
// and works, but no GPU context exists: the code never put its model or
// tensors on the GPU.
func (v *view) cudaUnused() (finding, bool) {
	if !v.libs.cudaLoaded() || gpuwizardTrain(v.idProc()) {
		return finding{}, false
	}
	var ev []string
	for _, k := range []string{LibTorchCUDA, LibCUDART, LibCuDNN, LibCuBLAS, LibJAXCUDA, LibORTCUDA} {
		if l, ok := v.libs.first(k); ok {
			ev = append(ev, "loaded: "+l.Path)
		}
	}
	if l, ok := v.libs.first(LibCUDA); ok {
		ev = append(ev, "loaded: "+l.Path+": CUDA was initialised (torch.cuda.is_available() or similar ran), yet no GPU memory was taken")
	} else {
		ev = append(ev, "the driver's CUDA library (libcuda.so.1, nvcuda.dll) is not loaded: CUDA was never initialised in this process, nothing asked for the GPU")
	}
	for _, d := range v.dev.evidence() {
		ev = append(ev, "device: "+d)
	}
	ev = append(ev, v.nvmlNotListed()...)
	ev = append(ev, v.ageText())
	py := v.python()
	_, torch := v.framework("torch")
	if fw, tf := v.framework("tensorflow"); tf && !torch {
		// TensorFlow puts its work on every GPU it can open by itself: with
		// no context it opened none.
		return finding{Finding: gpu.Finding{ID: "watch_tf_no_gpu_device", Cause: gpu.CauseTFGPULibs, Severity: gpu.SevError,
			Title:    tfName(fw) + " loaded CUDA libraries but opened no GPU (no GPU context or memory): it runs on the CPU",
			Evidence: ev,
			Fix: []gpu.Step{{Text: "See the GPUs TensorFlow finds; its log says which library it could not load (\"Cannot dlopen some GPU libraries\"):",
				Command: py + ` -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"`},
				{Text: "Check the whole chain for this interpreter:", Command: "gpuwizard doctor"}}},
			reason: "TensorFlow opened no GPU"}, true
	}
	fix := []gpu.Step{}
	if v.isYOLO() {
		fix = append(fix, gpu.Step{Text: "Ask Ultralytics for the GPU:", Command: "yolo train ... device=0"})
	} else if _, tf := v.framework("tensorflow"); !tf {
		fix = append(fix,
			gpu.Step{Text: "Move the model and every batch to the GPU:", Command: `device = torch.device("cuda"); model.to(device); x, y = x.to(device), y.to(device)`},
			gpu.Step{Text: "Check what torch sees from this interpreter:", Command: py + ` -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"`})
	}
	fix = append(fix, gpu.Step{Text: "A program that picks its device at start (device = 'cuda' if torch.cuda.is_available() else 'cpu') falls back silently: print the device it chose."})
	return finding{Finding: gpu.Finding{ID: "watch_cuda_unused", Cause: gpu.CauseDeviceMismatchInCode, Severity: gpu.SevError,
		Title:    "CUDA libraries are loaded but the process has no GPU context and no GPU memory: the code never moved its model to the GPU",
		Evidence: ev, Fix: fix},
		reason: "CUDA libraries are loaded but no GPU context or memory exists: the model was never moved to the GPU"}, true
}

// gpuwizardOnCPU: gpuwizard train past its setup with no GPU context.
func (v *view) gpuwizardOnCPU() (finding, bool) {
	if !gpuwizardTrain(v.idProc()) {
		return finding{}, false
	}
	ev := []string{fmt.Sprintf("%s: %s", v.where(v.id.pid, "cmdline"), gpu.Sanitize(strings.Join(v.id.cmdline, " ")))}
	if l, ok := v.libs.first(LibCUDA); ok {
		ev = append(ev, "loaded: "+l.Path+": its CUDA backend opened the driver, yet holds no GPU memory")
	} else {
		ev = append(ev, "the driver's CUDA library is not loaded: its CUDA backend did not start (--device auto chose the CPU)")
	}
	ev = append(ev, v.nvmlNotListed()...)
	return finding{Finding: gpu.Finding{ID: "watch_gpuwizard_cpu", Cause: gpu.CauseOther, Severity: gpu.SevError,
		Title:    "gpuwizard train runs on the CPU: its device is the CPU (--device auto found no GPU it accepts)",
		Evidence: ev,
		Fix: []gpu.Step{{Text: "See why the GPU was not taken:", Command: "gpuwizard doctor"},
			{Text: "Ask for the GPU: train then says why CUDA does not open, instead of falling back:", Command: "gpuwizard train --device cuda ..."}}},
		reason: "gpuwizard train chose the CPU"}, true
}

// nvmlNotListed says on which GPUs NVML does not list the tree.
func (v *view) nvmlNotListed() []string {
	var ev []string
	for _, d := range v.last.devs {
		if !d.ProcsOK {
			ev = append(ev, fmt.Sprintf("NVML: %s does not list its compute processes", d.label()))
			continue
		}
		who := fmt.Sprintf("PID %d is", v.pid)
		if n := len(v.last.members) - 1; n > 0 {
			who = fmt.Sprintf("PID %d and its %s are", v.pid, plural.Count(n, "child process"))
		}
		if !d.MemOK && len(d.Procs) == 0 && v.wsl {
			ev = append(ev, fmt.Sprintf("NVML: %s lists no process (WSL 2 gives no per-process data)", d.label()))
			continue
		}
		ev = append(ev, fmt.Sprintf("NVML: %s not among the %s of %s", who, plural.Count(len(d.Procs), "compute process"), d.label()))
	}
	return ev
}
