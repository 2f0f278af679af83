package gpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// judge holds one Diagnose call's state.
type judge struct {
	f        *Facts
	m        *Matrix
	out      []Finding
	advice   WheelAdvice
	adviceOK bool // the advice was computed from known GPUs and driver
	visible  []GPU
}

func (j *judge) add(fd Finding) { j.out = append(j.out, fd) }

// Diagnose runs every rule over the facts and returns the findings, most
// important first, and the verdict. It never fails: unknown facts produce
// no finding or a finding that says what to run to know more.
func Diagnose(f *Facts, m *Matrix) Report {
	f = fillFromNames(f, m)
	j := &judge{f: f, m: m}
	j.visible = j.visibleGPUs()
	j.computeAdvice()

	j.rulePlatform()
	driverOK := j.ruleDriver()
	j.ruleWSLAndContainers()
	if driverOK {
		j.ruleDeviceSelection()
		j.ruleMemory()
		j.ruleGPUState()
	}
	j.ruleEndOfSupport()
	j.ruleFrameworks()
	j.ruleInstalls()
	j.ruleToolkits()
	j.ruleDeep()
	j.judgePaste()
	j.ruleAdvice()
	j.ruleGPUsOK(driverOK)
	j.quoteEvidence()

	sortFindings(j.out)
	r := Report{Findings: j.out, Facts: f}
	r.Ready = driverOK && len(j.visible) > 0 && !hasSeverity(j.out, SevError)
	r.Verdict = j.verdict(r.Ready)
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return r
}

// fillFromNames gives GPUs whose compute capability is unknown (a pasted
// report, an NVML that does not say) the one their names imply, on a copy
// of the facts: every rule then reads g.CC.
func fillFromNames(f *Facts, m *Matrix) *Facts {
	c := *f
	c.NVML.GPUs = append([]GPU(nil), f.NVML.GPUs...)
	for i := range c.NVML.GPUs {
		if c.NVML.GPUs[i].CC == "" {
			c.NVML.GPUs[i].CC = m.CCForName(c.NVML.GPUs[i].Name)
		}
	}
	return &c
}

func hasSeverity(fs []Finding, s Severity) bool {
	for _, f := range fs {
		if f.Severity == s {
			return true
		}
	}
	return false
}

func (j *judge) verdict(ready bool) string {
	if ready {
		g := j.visible[0]
		s := fmt.Sprintf("Ready: GPU training will use GPU %d (%s)", g.Index, g.Name)
		if env, pk, ok := j.primaryTorch(); ok && !pk.CPUOnly {
			s += fmt.Sprintf(" with torch %s in %s", pk.Version, env.Interpreter)
		}
		return s + "."
	}
	for _, fd := range j.out {
		if fd.Severity == SevError {
			if j.f.Origin == "paste" {
				return "Diagnosis: " + fd.Title + "."
			}
			return "Not ready: " + fd.Title + "."
		}
	}
	if j.f.Origin == "paste" {
		if len(j.out) > 0 && j.out[0].Severity == SevWarning {
			return "Diagnosis: " + j.out[0].Title + "."
		}
		return "No problem found in the report; it may not show enough to decide."
	}
	if len(j.f.NVML.GPUs) == 0 && j.f.NVML.Status == "" {
		return "Not ready: the GPU could not be checked."
	}
	return "Not ready: no usable NVIDIA GPU."
}

func (j *judge) windows() bool { return j.f.Host.OS == "windows" }

// driverCUDA is the newest CUDA the driver runs, from NVML or, failing that,
// from the driver version and the toolkit table.
func (j *judge) driverCUDA() string {
	if j.f.NVML.CUDADriverVersion != "" {
		return j.f.NVML.CUDADriverVersion
	}
	dv := j.driverVersion()
	if dv == "" {
		return ""
	}
	best := ""
	for _, t := range j.m.ToolkitDrivers {
		floor := t.DriverLinux
		if j.windows() && t.DriverWindows != "" {
			floor = t.DriverWindows
		}
		if VersionAtLeast(dv, floor) && (best == "" || VersionAtLeast(t.CUDA, best)) {
			best = t.CUDA
		}
	}
	return best
}

func (j *judge) driverVersion() string {
	if j.f.NVML.DriverVersion != "" {
		return j.f.NVML.DriverVersion
	}
	return j.f.Driver.ModuleVersion
}

// visibleGPUs applies CUDA_VISIBLE_DEVICES the way CUDA does: a list of
// indices or UUID prefixes, cut at the first entry that matches nothing.
func (j *judge) visibleGPUs() []GPU {
	all := j.f.NVML.GPUs
	ev, set := j.f.EnvVar("CUDA_VISIBLE_DEVICES")
	if !set {
		return all
	}
	var out []GPU
	for _, tok := range strings.Split(ev.Value, ",") {
		tok = strings.TrimSpace(tok)
		g, ok := matchGPU(all, tok)
		if !ok {
			break
		}
		out = append(out, g)
	}
	return out
}

func matchGPU(all []GPU, tok string) (GPU, bool) {
	if tok == "" {
		return GPU{}, false
	}
	if n, err := strconv.Atoi(tok); err == nil {
		for _, g := range all {
			if g.Index == n {
				return g, true
			}
		}
		return GPU{}, false
	}
	want := strings.TrimPrefix(strings.ToUpper(tok), "GPU-")
	for _, g := range all {
		have := strings.TrimPrefix(strings.ToUpper(g.UUID), "GPU-")
		if have != "" && strings.HasPrefix(have, want) {
			return g, true
		}
	}
	return GPU{}, false
}

func (j *judge) nvidiaPCI() []PCIDevice {
	var out []PCIDevice
	for _, d := range j.f.PCI {
		if d.IsGPU() {
			out = append(out, d)
		}
	}
	return out
}

func (j *judge) hasGPUHardware() bool {
	if j.f.Origin == "paste" {
		return true // a report about GPU training comes from a machine with a GPU, unless it shows otherwise
	}
	return len(j.nvidiaPCI()) > 0 || len(j.f.NVML.GPUs) > 0 || j.f.Host.WSL == 2 && j.f.Host.WSLLibCUDA
}

// primaryPython is the environment `python` (else `python3`) runs.
func (j *judge) primaryPython() (PythonEnv, bool) {
	for _, cmd := range []string{"python", "python3"} {
		for _, e := range j.f.Pythons {
			if contains(e.Commands, cmd) {
				return e, true
			}
		}
	}
	return PythonEnv{}, false
}

func (j *judge) primaryTorch() (PythonEnv, Package, bool) {
	if e, ok := j.primaryPython(); ok {
		if pk, ok := e.Package("torch"); ok {
			return e, pk, true
		}
	}
	return PythonEnv{}, Package{}, false
}

func (j *judge) computeAdvice() {
	var q WheelQuery
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

// wheelFix is the fix that installs the advised wheel into env.
func (j *judge) wheelFix(env PythonEnv) []Step {
	py := env.Interpreter
	if env.Kind == "paste" {
		py = "python"
	}
	if !j.adviceOK || !j.advice.OK {
		return j.releaseFix(env, py)
	}
	steps := []Step{}
	if env.Kind == "system" {
		text := "The system Python is managed by the distribution (pip refuses to change it); install the GPU build in a virtual environment:"
		if strings.HasPrefix(firstLocation(env, "torch"), "/usr/lib/python3/") {
			text = "This torch comes from the distribution (apt's python3-torch) and is CPU-only. Keep it, and install the GPU build in a virtual environment:"
		}
		steps = append(steps, Step{Text: text, Command: "python3 -m venv ~/.venv-gpu"})
		py = "~/.venv-gpu/bin/python"
	}
	steps = append(steps, Step{
		Text:    fmt.Sprintf("Install torch %s built for %s, the newest official wheel that runs on every GPU here with this driver:", j.advice.Torch, j.advice.Variant),
		Command: j.advice.PipCommand(py),
	})
	return steps
}

// releaseFix is the fix when the GPUs or the driver are unknown: the CUDA
// wheels of the installed torch release, newest CUDA first, with the driver
// each needs.
func (j *judge) releaseFix(env PythonEnv, py string) []Step {
	pk, _ := env.Package("torch")
	r, ok := j.m.TorchRelease(pk.Version)
	if !ok || len(r.Variants) == 0 {
		return []Step{{Text: "Install a CUDA build of PyTorch that matches your driver and GPU; pick the command at https://pytorch.org/get-started/locally/ and use --index-url, not plain PyPI. See what the driver supports:", Command: "nvidia-smi"}}
	}
	steps := []Step{{Text: "See which CUDA the driver supports (\"CUDA Version\" in the header):", Command: "nvidia-smi"}}
	for i, v := range r.Variants {
		floor := j.m.FamilyFloor(MustVersion(v.CUDA).Major(), j.windows())
		text := fmt.Sprintf("Then install torch %s built for %s (driver ≥ %s):", r.Version, v.Name, floor)
		if i > 0 {
			text = fmt.Sprintf("Or, with an older driver, for %s (driver ≥ %s):", v.Name, floor)
		}
		steps = append(steps, Step{Text: text, Command: fmt.Sprintf("%s -m pip install --force-reinstall torch==%s.* torchvision==%s.* --index-url https://download.pytorch.org/whl/%s", shellQuote(py), r.Version, r.TorchVision, v.Name)})
		if i == 1 {
			break
		}
	}
	return steps
}

func firstLocation(env PythonEnv, name string) string {
	if pk, ok := env.Package(name); ok {
		return pk.Location
	}
	return ""
}

// --- platform and driver layer -------------------------------------------

func (j *judge) rulePlatform() {
	if j.f.Host.OS == "darwin" {
		j.add(Finding{ID: "macos_no_cuda", Cause: CauseOther, Severity: SevError,
			Title:    "macOS has no NVIDIA CUDA",
			Evidence: []string{"operating system: macOS"},
			Fix: []Step{{Text: "On a Mac with Apple silicon, train with PyTorch's MPS device instead (device=\"mps\"); check it with:",
				Command: `python3 -c "import torch; print(torch.backends.mps.is_available())"`}}})
	}
}

// ruleDriver judges the kernel module, the driver libraries and NVML. It
// returns whether the driver answers (NVML works).
func (j *judge) ruleDriver() bool {
	f := j.f
	nv := f.NVML
	pci := j.nvidiaPCI()
	var pciEv []string
	for _, d := range pci {
		drv := d.Driver
		if drv == "" {
			drv = "no driver bound"
		}
		pciEv = append(pciEv, fmt.Sprintf("PCI %s: NVIDIA device %s (class %s), kernel driver: %s", d.Address, d.Device, d.Class, drv))
	}
	nouveau := f.Driver.HasModule("nouveau")
	for _, d := range pci {
		nouveau = nouveau || d.Driver == "nouveau"
	}
	nvEv := "NVML: " + nv.Status
	if nv.Error != "" {
		nvEv = "NVML: " + nv.Error
	}
	installFix := j.driverInstallFix()

	switch nv.Status {
	case NVMLOK:
		if len(nv.GPUs) == 0 && f.Origin == "paste" {
			return true // a truncated nvidia-smi table: the driver answered
		}
		if len(nv.GPUs) == 0 {
			j.add(Finding{ID: "nvml_no_gpus", Cause: CauseDriverMissing, Severity: SevError,
				Title:    "The NVIDIA driver is loaded but reports no GPU",
				Evidence: append([]string{"NVML: driver " + nv.DriverVersion + ", 0 GPUs"}, pciEv...),
				Fix:      []Step{{Text: "Look for GPU errors in the kernel log:", Command: "sudo dmesg | grep -iE 'nvidia|NVRM|xid'"}}})
			return false
		}
		if mv := f.Driver.ModuleVersion; mv != "" && nv.DriverVersion != "" && mv != nv.DriverVersion {
			j.add(j.rebootFinding([]string{
				"kernel module: " + mv + " (/proc/driver/nvidia/version)",
				"driver library: " + nv.DriverVersion + " (NVML)"}))
		}
		j.ruleDeviceNodes()
		return true
	case NVMLRMMismatch:
		ev := []string{nvEv}
		if f.Driver.ModuleVersion != "" {
			ev = append(ev, "kernel module: "+f.Driver.ModuleVersion+" (/proc/driver/nvidia/version)")
		}
		for _, l := range f.CUDA.Libraries {
			if l.Name == "libnvidia-ml" && l.Version != "" && l.Version != f.Driver.ModuleVersion {
				ev = append(ev, "driver library: "+l.Path+" → "+l.Version)
				break
			}
		}
		j.add(j.rebootFinding(ev))
		return false
	case NVMLNoPermission:
		j.add(Finding{ID: "nvml_no_permission", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "This user may not open the GPU device files",
			Evidence: append([]string{nvEv}, j.nodeEvidence()...),
			Fix: []Step{
				{Text: "Add yourself to the groups that own the device files, then log out and back in:", Command: "sudo usermod -aG video,render $USER"},
				{Text: "Check the device files' owners and modes:", Command: "ls -l /dev/nvidia*"}}})
		return false
	case NVMLGPULost:
		j.add(Finding{ID: "gpu_lost", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "A GPU has fallen off the bus",
			Evidence: []string{nvEv},
			Fix: []Step{{Text: "Read the driver's Xid errors, then power-cycle the machine (check power cables and the PCIe slot if it repeats):", Command: "sudo dmesg | grep -i xid"},
				{Text: "Restart:", Command: "sudo reboot"}}})
		return false
	case NVMLDriverNotLoaded:
		j.judgeModuleNotLoaded(pciEv, nvEv, nouveau)
		return false
	case NVMLLibraryNotFound:
		if f.Host.WSL > 0 || f.Host.OS == "darwin" {
			return false // judged by the WSL rule
		}
		switch {
		case len(pci) == 0:
			if st, ok := f.Source("pci"); !ok || !st.OK {
				return false // PCI unknown (a paste, or sysfs unreadable): the container rule or nothing
			}
			fix := []Step{
				{Text: "Training can only run on the CPU here; it works, slowly:", Command: "gpuwizard train --device cpu"},
				{Text: "For GPU training use a machine or cloud instance with an NVIDIA GPU, and run this check there."}}
			ev := []string{"no PCI display device with vendor 0x10de in /sys/bus/pci/devices", nvEv}
			if f.Host.Container != "" {
				ev = append(ev, "inside a "+f.Host.Container+" container")
				fix = append(fix, Step{Text: "If the host does have an NVIDIA GPU, start this container with it (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."})
			}
			j.add(Finding{ID: "no_nvidia_gpu", Cause: CauseOther, Severity: SevError,
				Title: "This machine has no NVIDIA GPU", Evidence: ev, Fix: fix})
		case nouveau:
			j.add(j.nouveauFinding(pciEv))
		default:
			j.add(Finding{ID: "driver_not_installed", Cause: CauseDriverMissing, Severity: SevError,
				Title:    "An NVIDIA GPU is present but the NVIDIA driver is not installed",
				Evidence: append(pciEv, nvEv),
				Fix:      installFix})
		}
		return false
	case NVMLError:
		j.add(Finding{ID: "nvml_error", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "The NVIDIA driver does not answer",
			Evidence: append([]string{nvEv}, pciEv...),
			Fix:      []Step{{Text: "Read the kernel log for the driver's own error:", Command: "sudo dmesg | grep -iE 'nvidia|NVRM'"}}})
		return false
	}
	return false
}

func (j *judge) rebootFinding(ev []string) Finding {
	return Finding{ID: "reboot_needed", Cause: CauseDriverMissing, Severity: SevError,
		Title:    "The driver was upgraded but the old kernel module is still loaded (reboot needed)",
		Evidence: ev,
		Fix: []Step{{Text: "Restart the machine so the new kernel module loads:", Command: "sudo reboot"},
			{Text: "If a reboot is impossible now, stop every GPU program and reload the module:", Command: "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"}}}
}

func (j *judge) driverInstallFix() []Step {
	switch j.f.Host.Distro {
	case "ubuntu", "pop", "linuxmint":
		return []Step{{Text: "Install the recommended NVIDIA driver, then restart:", Command: "sudo ubuntu-drivers install && sudo reboot"}}
	case "debian":
		return []Step{
			{Text: "Enable Debian's contrib and non-free components (add them to the lines in /etc/apt/sources.list), then install the driver and restart:",
				Command: "sudo apt-get update && sudo apt-get install -y linux-headers-$(uname -r) nvidia-driver firmware-misc-nonfree && sudo reboot"}}
	case "fedora":
		return []Step{{Text: "Enable RPM Fusion, install the driver, then restart:", Command: "sudo dnf install akmod-nvidia && sudo reboot"}}
	case "arch", "manjaro":
		return []Step{{Text: "Install the driver, then restart:", Command: "sudo pacman -S nvidia && sudo reboot"}}
	}
	return []Step{{Text: "Install the NVIDIA driver from your distribution's packages (or https://www.nvidia.com/Download/index.aspx), then restart."}}
}

func (j *judge) nouveauFinding(pciEv []string) Finding {
	return Finding{ID: "nouveau_loaded", Cause: CauseDriverMissing, Severity: SevError,
		Title:    "The open-source nouveau driver drives the GPU: CUDA needs NVIDIA's driver",
		Evidence: append([]string{"kernel module nouveau is loaded (/proc/modules)"}, pciEv...),
		Fix: append(j.driverInstallFix(),
			Step{Text: "If nouveau still loads after installing the driver, block it and rebuild the initramfs:",
				Command: `printf 'blacklist nouveau\noptions nouveau modeset=0\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot`})}
}

func (j *judge) judgeModuleNotLoaded(pciEv []string, nvEv string, nouveau bool) {
	f := j.f
	ev := append([]string{nvEv, "no nvidia kernel module in /proc/modules"}, pciEv...)
	switch {
	case nouveau:
		j.add(j.nouveauFinding(pciEv))
	case f.Host.SecureBoot == "enabled":
		j.add(Finding{ID: "secure_boot_blocks_module", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "Secure Boot is on and the NVIDIA kernel module is not loaded (an unsigned module is refused)",
			Evidence: append(ev, "Secure Boot: enabled (EFI SecureBoot variable)"),
			Fix: []Step{
				{Text: "Enroll the key DKMS signs modules with, restart, and accept the key in the blue MOK screen:", Command: "sudo mokutil --import /var/lib/dkms/mok.pub && sudo reboot"},
				{Text: "Or turn Secure Boot off in the firmware settings."}}})
	default:
		j.add(Finding{ID: "module_not_loaded", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "The NVIDIA driver is installed but its kernel module is not loaded",
			Evidence: ev,
			Fix: []Step{
				{Text: "Load it and read why it fails, if it does:", Command: "sudo modprobe nvidia && sudo dmesg | tail -20"},
				{Text: "If the module was not built for the running kernel (after a kernel update), rebuild it:", Command: "sudo apt-get install -y linux-headers-$(uname -r) && sudo dkms autoinstall && sudo reboot"}}})
	}
}

func (j *judge) nodeEvidence() []string {
	var ev []string
	for _, n := range j.f.Driver.DeviceNodes {
		ev = append(ev, fmt.Sprintf("%s %s readable=%v writable=%v", n.Path, n.Mode, n.Readable, n.Writable))
	}
	if len(ev) == 0 {
		ev = append(ev, "no /dev/nvidia* device files")
	}
	return ev
}

func (j *judge) ruleDeviceNodes() {
	f := j.f
	if f.Host.WSL > 0 {
		return
	}
	if _, ok := f.Source("driver"); !ok {
		return
	}
	has := map[string]DeviceNode{}
	for _, n := range f.Driver.DeviceNodes {
		has[n.Path] = n
	}
	if _, ok := has["/dev/nvidia-uvm"]; !ok && len(f.Driver.DeviceNodes) > 0 {
		j.add(Finding{ID: "uvm_missing", Cause: CauseDriverMissing, Severity: SevError,
			Title:    "/dev/nvidia-uvm is missing: CUDA programs cannot start",
			Evidence: j.nodeEvidence(),
			Fix:      []Step{{Text: "Load the unified-memory module and create its device file:", Command: "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0"}}})
	}
	var bad []string
	for _, n := range f.Driver.DeviceNodes {
		if !n.Readable || !n.Writable {
			bad = append(bad, fmt.Sprintf("%s %s readable=%v writable=%v", n.Path, n.Mode, n.Readable, n.Writable))
		}
	}
	if len(bad) > 0 {
		j.add(Finding{ID: "device_nodes_permission", Cause: CauseDriverMissing, Severity: SevWarning,
			Title:    "Some GPU device files cannot be opened by this user",
			Evidence: bad,
			Fix:      []Step{{Text: "Add yourself to the groups that own them, then log out and back in:", Command: "sudo usermod -aG video,render $USER"}}})
	}
}

func (j *judge) ruleWSLAndContainers() {
	f := j.f
	switch f.Host.WSL {
	case 1:
		j.add(Finding{ID: "wsl1_no_gpu", Cause: CauseWSLOrContainer, Severity: SevError,
			Title:    "WSL 1 cannot use the GPU; only WSL 2 can",
			Evidence: []string{"kernel: " + f.Host.Kernel},
			Fix:      []Step{{Text: "In Windows PowerShell, convert the distribution to WSL 2 (replace Ubuntu with yours):", Command: "wsl --set-version Ubuntu 2"}}})
	case 2:
		if !f.Host.WSLLibCUDA {
			j.add(Finding{ID: "wsl_no_windows_driver", Cause: CauseWSLOrContainer, Severity: SevError,
				Title:    "WSL 2 has no GPU driver: /usr/lib/wsl/lib/libcuda.so.1 is missing",
				Evidence: []string{"kernel: " + f.Host.Kernel, "/usr/lib/wsl/lib/libcuda.so.1: missing"},
				Fix:      []Step{{Text: "Install or update the NVIDIA driver on Windows (not inside WSL), then restart WSL from PowerShell:", Command: "wsl --shutdown"}}})
		}
		var inside []string
		for _, l := range f.CUDA.Libraries {
			if (l.Name == "libcuda" || l.Name == "libnvidia-ml") && l.Origin == "ldconfig" && !strings.HasPrefix(l.Path, "/usr/lib/wsl/") {
				inside = append(inside, l.Path)
			}
		}
		if len(inside) > 0 {
			j.add(Finding{ID: "wsl_linux_driver_inside", Cause: CauseWSLOrContainer, Severity: SevError,
				Title:    "A Linux NVIDIA driver is installed inside WSL and shadows the Windows driver",
				Evidence: append([]string{"kernel: " + f.Host.Kernel}, inside...),
				Fix: []Step{{Text: "Remove the Linux driver packages inside WSL (keep the CUDA toolkit if you need it), then restart WSL:",
					Command: "sudo apt-get remove --purge '^nvidia-.*' '^libnvidia-.*' && wsl.exe --shutdown"}}})
		}
	}
	pciKnown := false
	if st, ok := f.Source("pci"); ok && st.OK {
		pciKnown = true
	}
	if f.Host.Container != "" && f.Host.WSL == 0 && len(f.Driver.DeviceNodes) == 0 && f.NVML.Status != NVMLOK && (len(j.nvidiaPCI()) > 0 || !pciKnown) {
		if _, ok := f.Source("driver"); ok {
			j.add(Finding{ID: "container_without_gpu", Cause: CauseWSLOrContainer, Severity: SevError,
				Title:    "This container was started without access to the GPU",
				Evidence: []string{"container: " + f.Host.Container, "no /dev/nvidia* device files", "NVML: " + f.NVML.Status},
				Fix: []Step{{Text: "Start the container with the GPUs (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."},
					{Text: "On the host, check that the toolkit works:", Command: "docker run --rm --gpus all ubuntu nvidia-smi"}}})
		}
	}
	if ev, ok := f.EnvVar("NVIDIA_VISIBLE_DEVICES"); ok && (ev.Value == "void" || ev.Value == "none" || ev.Value == "") && f.Host.Container != "" {
		j.add(Finding{ID: "nvidia_visible_devices_none", Cause: CauseWSLOrContainer, Severity: SevError,
			Title:    "NVIDIA_VISIBLE_DEVICES gives this container no GPU",
			Evidence: []string{fmt.Sprintf("NVIDIA_VISIBLE_DEVICES=%q", ev.Value)},
			Fix:      []Step{{Text: "Start the container with GPUs:", Command: "docker run --gpus all -e NVIDIA_VISIBLE_DEVICES=all ..."}}})
	}
}

// --- GPUs ----------------------------------------------------------------

func (j *judge) ruleDeviceSelection() {
	f := j.f
	ev, set := f.EnvVar("CUDA_VISIBLE_DEVICES")
	all := f.NVML.GPUs
	if set {
		val := ev.Value
		shown := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", val)
		counts := fmt.Sprintf("NVML sees %d GPU(s); CUDA will see %d", len(all), len(j.visible))
		switch {
		case len(j.visible) == 0:
			why := "it is set but empty"
			if strings.TrimSpace(val) != "" {
				why = fmt.Sprintf("%q matches no GPU (CUDA stops at the first entry it cannot match)", strings.Split(val, ",")[0])
			}
			if strings.TrimSpace(val) == "-1" {
				why = "-1 hides every GPU (Ultralytics sets it for device=cpu)"
			}
			j.add(Finding{ID: "cuda_visible_devices_hides_all", Cause: CauseDeviceSelection, Severity: SevError,
				Title:    "CUDA_VISIBLE_DEVICES hides every GPU: " + why,
				Evidence: []string{shown, counts},
				Fix: []Step{{Text: "Unset it in this shell (and look for it in ~/.bashrc, your IDE's run configuration or the script):", Command: "unset CUDA_VISIBLE_DEVICES"},
					{Text: "Or name the GPU to use:", Command: "export CUDA_VISIBLE_DEVICES=0"}}})
		case len(j.visible) < len(strings.Split(val, ",")):
			j.add(Finding{ID: "cuda_visible_devices_invalid_entry", Cause: CauseDeviceSelection, Severity: SevWarning,
				Title:    "CUDA_VISIBLE_DEVICES names a GPU that does not exist; CUDA ignores it and every entry after it",
				Evidence: []string{shown, counts},
				Fix:      []Step{{Text: fmt.Sprintf("Use indices 0 to %d or GPU UUIDs from:", len(all)-1), Command: "nvidia-smi -L"}}})
		case len(j.visible) < len(all):
			var names []string
			for _, g := range j.visible {
				names = append(names, fmt.Sprintf("%d (%s)", g.Index, g.Name))
			}
			j.add(Finding{ID: "cuda_visible_devices_subset", Cause: CauseDeviceSelection, Severity: SevInfo,
				Title:    fmt.Sprintf("CUDA_VISIBLE_DEVICES limits CUDA to %d of %d GPUs", len(j.visible), len(all)),
				Evidence: []string{shown, "visible: " + strings.Join(names, ", ")},
				Fix:      []Step{{Text: "Inside programs the visible GPUs are renumbered from cuda:0. To use all of them:", Command: "unset CUDA_VISIBLE_DEVICES"}}})
		}
	}
	names := map[string]bool{}
	for _, g := range all {
		names[g.Name] = true
	}
	if order, _ := f.EnvVar("CUDA_DEVICE_ORDER"); len(names) > 1 && order.Value != "PCI_BUS_ID" {
		j.add(Finding{ID: "cuda_device_order", Cause: CauseDeviceSelection, Severity: SevInfo,
			Title:    "Different GPU models: CUDA numbers them fastest first, nvidia-smi by PCI bus",
			Evidence: []string{fmt.Sprintf("%d models: %s", len(names), strings.Join(sortedKeys(names), ", ")), "CUDA_DEVICE_ORDER is not PCI_BUS_ID"},
			Fix:      []Step{{Text: "Make cuda:N mean the same GPU as nvidia-smi's N:", Command: "export CUDA_DEVICE_ORDER=PCI_BUS_ID"}}})
	}
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (j *judge) ruleMemory() {
	for _, g := range j.visible {
		if g.MemoryTotalMiB == 0 {
			continue
		}
		used := g.MemoryUsedMiB
		var procUsed uint64
		var ev []string
		for _, p := range g.Processes {
			procUsed += p.UsedMiB
			name := p.Name
			if name == "" {
				name = "(not visible here: another container or user)"
			}
			ev = append(ev, fmt.Sprintf("PID %d %s holds %d MiB", p.PID, name, p.UsedMiB))
		}
		used = max(used, procUsed)
		frac := float64(used) / float64(g.MemoryTotalMiB)
		if frac < 0.5 {
			continue
		}
		sev := SevWarning
		if frac >= 0.9 {
			sev = SevError
		}
		ev = append([]string{fmt.Sprintf("GPU %d (%s): %d of %d MiB in use (%.0f%%), %d MiB free", g.Index, g.Name, used, g.MemoryTotalMiB, frac*100, g.MemoryTotalMiB-min(used, g.MemoryTotalMiB))}, ev...)
		fix := []Step{{Text: "See who holds it:", Command: "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"}}
		if len(g.Processes) > 0 {
			fix = append(fix, Step{Text: "Stop the process if it is yours and no longer needed:", Command: fmt.Sprintf("kill %d", g.Processes[0].PID)})
		}
		if len(j.visible) > 1 {
			fix = append(fix, Step{Text: "Or train on another GPU:", Command: "export CUDA_VISIBLE_DEVICES=<free GPU index>"})
		}
		fix = append(fix, Step{Text: "Or lower the batch size (Ultralytics: batch=-1 picks one that fits)."})
		j.add(Finding{ID: "gpu_memory_in_use", Cause: CauseOutOfMemory, Severity: sev,
			Title:    fmt.Sprintf("GPU %d memory is %.0f%% taken by other processes", g.Index, frac*100),
			Evidence: ev, Fix: fix})
	}
}

func (j *judge) ruleGPUState() {
	for _, g := range j.visible {
		if g.MIGEnabled != nil && *g.MIGEnabled {
			j.add(Finding{ID: "mig_enabled", Cause: CauseDeviceSelection, Severity: SevInfo,
				Title:    fmt.Sprintf("GPU %d is split into MIG instances", g.Index),
				Evidence: []string{fmt.Sprintf("GPU %d (%s): MIG mode enabled", g.Index, g.Name)},
				Fix: []Step{{Text: "CUDA sees MIG instances, not the whole GPU; select one by its UUID:", Command: "nvidia-smi -L"},
					{Text: "Then:", Command: "export CUDA_VISIBLE_DEVICES=MIG-<uuid>"}}})
		}
		for _, r := range g.ThrottleReasons {
			if strings.Contains(r, "thermal") || strings.Contains(r, "hardware") {
				j.add(Finding{ID: "gpu_throttled", Cause: CauseOther, Severity: SevWarning,
					Title:    fmt.Sprintf("GPU %d is slowing its clocks (%s)", g.Index, strings.Join(g.ThrottleReasons, ", ")),
					Evidence: []string{fmt.Sprintf("GPU %d (%s): clock event reasons: %s", g.Index, g.Name, strings.Join(g.ThrottleReasons, ", "))},
					Fix:      []Step{{Text: "Check cooling and power; watch temperature and clocks while training:", Command: "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"}}})
				break
			}
		}
	}
}

func (j *judge) ruleEndOfSupport() {
	seen := map[string]bool{}
	for _, g := range j.f.NVML.GPUs {
		cc := g.CC
		a, ok := j.m.Arch(cc)
		if !ok || a.LastDriverBranch == "" || seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		torch := "torch wheels built for " + a.LastTorchVariant
		if a.LastTorch != "" {
			torch = fmt.Sprintf("torch ≤ %s built for %s", a.LastTorch, a.LastTorchVariant)
		}
		sev := SevInfo
		if a.Name == "Kepler" {
			sev = SevWarning
		}
		j.add(Finding{ID: "end_of_support_" + strings.ToLower(a.Name), Cause: CauseArchUnsupported, Severity: sev,
			Title: fmt.Sprintf("%s (%s GPU) is at the end of NVIDIA's support: driver %s is its last, %s its last PyTorch line", g.Name, a.Name, a.LastDriverBranch, torch),
			Evidence: []string{fmt.Sprintf("GPU %d: %s, compute capability %s (%s)", g.Index, g.Name, cc, a.Name),
				fmt.Sprintf("last driver branch R%s (runs CUDA ≤ %s); newer CUDA toolkits cannot build for it", a.LastDriverBranch, a.LastDriverCUDA)},
			Fix: []Step{{Text: fmt.Sprintf("Stay on driver branch %s and %s; newer wheels (cu128 and later) have no kernels for this GPU.", a.LastDriverBranch, torch)}}})
	}
}
