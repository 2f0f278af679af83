package doctor

import (
	"fmt"
	"gpuwizard/gpu"
)

func (j *judge) rulePlatform() {
	if j.f.Host.OS == "darwin" {
		ev := []string{"operating system: macOS"}
		if p := j.f.Paste; p != nil && len(p.Quotes["os"]) > 0 {
			ev = quoteLines(p.Quotes["os"])
		}
		// A Mac explains what fails for lack of CUDA: a framework without
		// it (the right build there), no driver, no device.
		j.addExplaining(gpu.Finding{ID: "macos_no_cuda", Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title:    "macOS has no NVIDIA CUDA",
			Evidence: ev,
			Fix: []gpu.Step{{Text: "On a Mac with Apple silicon, train with PyTorch's MPS device instead (device=\"mps\"); check it with:",
				Command: `python3 -c "import torch; print(torch.backends.mps.is_available())"`}}}, noCUDAExplains...)
	}
}

// ruleDriver judges the kernel module, the driver libraries and NVML. It
// returns whether the driver answers (NVML works).
func (j *judge) ruleDriver() { j.driverOK = j.judgeDriver() }

// judgeDriver judges the driver and reports whether it answers.
func (j *judge) judgeDriver() bool {
	f := j.f
	if f.Windows != nil {
		return j.judgeWindowsDriver()
	}
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
	case gpu.NVMLOK:
		if len(nv.GPUs) == 0 && f.Origin == "paste" {
			return true // a truncated nvidia-smi table: the driver answered
		}
		if len(nv.GPUs) == 0 {
			j.add(gpu.Finding{ID: "nvml_no_gpus", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
				Title:    "The NVIDIA driver is loaded but reports no GPU",
				Evidence: append([]string{"NVML: driver " + nv.DriverVersion + ", 0 GPUs"}, pciEv...),
				Fix:      []gpu.Step{{Text: "Look for GPU errors in the kernel log:", Command: "sudo dmesg | grep -iE 'nvidia|NVRM|xid'"}}})
			return false
		}
		if mv := f.Driver.ModuleVersion; mv != "" && nv.DriverVersion != "" && mv != nv.DriverVersion {
			j.add(j.rebootFinding([]string{
				"kernel module: " + mv + " (/proc/driver/nvidia/version)",
				"driver library: " + nv.DriverVersion + " (NVML)"}))
		}
		j.ruleDeviceNodes()
		return true
	case gpu.NVMLRMMismatch:
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
	case gpu.NVMLNoPermission:
		j.add(gpu.Finding{ID: "nvml_no_permission", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "This user may not open the GPU device files",
			Evidence: append([]string{nvEv}, j.nodeEvidence()...),
			Fix: []gpu.Step{
				{Text: "Add yourself to the groups that own the device files, then log out and back in:", Command: "sudo usermod -aG video,render $USER"},
				{Text: "Check the device files' owners and modes:", Command: "ls -l /dev/nvidia*"}}})
		return false
	case gpu.NVMLGPULost:
		j.add(gpu.Finding{ID: "gpu_lost", Cause: gpu.CauseOther, Severity: gpu.SevError,
			Title:    "A GPU has fallen off the bus (a hardware fault: power, seating or heat; not the software)",
			Evidence: []string{nvEv},
			Fix: []gpu.Step{{Text: "Read the driver's Xid errors, then power-cycle the machine (check power cables and the PCIe slot if it repeats):", Command: "sudo dmesg | grep -i xid"},
				{Text: "Restart:", Command: "sudo reboot"}}})
		return false
	case gpu.NVMLDriverNotLoaded:
		if len(pci) == 0 && j.pciKnown() && !nouveau {
			// A driver library without a GPU (a distribution's
			// libnvidia-ml pulled in by a package): no GPU to load it for.
			j.noNVIDIAGPU(nvEv)
			return false
		}
		j.judgeModuleNotLoaded(pciEv, nvEv, nouveau)
		return false
	case gpu.NVMLLibraryNotFound:
		if f.Host.WSL > 0 || f.Host.OS == "darwin" {
			return false // judged by the WSL rule
		}
		switch {
		case len(pci) == 0:
			j.noNVIDIAGPU(nvEv)
		case nouveau:
			j.add(j.nouveauFinding(pciEv))
		default:
			j.add(gpu.Finding{ID: "driver_not_installed", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
				Title:    "An NVIDIA GPU is present but the NVIDIA driver is not installed",
				Evidence: append(pciEv, nvEv),
				Fix:      installFix})
		}
		return false
	case gpu.NVMLError:
		j.add(gpu.Finding{ID: "nvml_error", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "The NVIDIA driver does not answer",
			Evidence: append([]string{nvEv}, pciEv...),
			Fix:      []gpu.Step{{Text: "Read the kernel log for the driver's own error:", Command: "sudo dmesg | grep -iE 'nvidia|NVRM'"}}})
		return false
	}
	return false
}

func (j *judge) rebootFinding(ev []string) gpu.Finding {
	return gpu.Finding{ID: "reboot_needed", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
		Title:    "The driver was upgraded but the old kernel module is still loaded (reboot needed)",
		Evidence: ev,
		Fix: []gpu.Step{{Text: "Restart the machine so the new kernel module loads:", Command: "sudo reboot"},
			{Text: "If a reboot is impossible now, stop every GPU program and reload the module:", Command: "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"}}}
}

func (j *judge) driverInstallFix() []gpu.Step {
	if j.windows() {
		return windowsDriverFix()
	}
	switch j.f.Host.Distro {
	case "ubuntu", "pop", "linuxmint":
		return []gpu.Step{{Text: "Install the recommended NVIDIA driver, then restart:", Command: "sudo ubuntu-drivers install && sudo reboot"}}
	case "debian":
		return []gpu.Step{
			{Text: "Enable Debian's contrib and non-free components (add them to the lines in /etc/apt/sources.list), then install the driver and restart:",
				Command: "sudo apt-get update && sudo apt-get install -y linux-headers-$(uname -r) nvidia-driver firmware-misc-nonfree && sudo reboot"}}
	case "fedora":
		return []gpu.Step{{Text: "Enable RPM Fusion, install the driver, then restart:", Command: "sudo dnf install akmod-nvidia && sudo reboot"}}
	case "arch", "manjaro":
		return []gpu.Step{{Text: "Install the driver, then restart:", Command: "sudo pacman -S nvidia && sudo reboot"}}
	}
	return []gpu.Step{{Text: "Install the NVIDIA driver from your distribution's packages (or https://www.nvidia.com/Download/index.aspx), then restart."}}
}

func (j *judge) nouveauFinding(pciEv []string) gpu.Finding {
	return gpu.Finding{ID: "nouveau_loaded", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
		Title:    "The open-source nouveau driver drives the GPU: CUDA needs NVIDIA's driver",
		Evidence: append([]string{"kernel module nouveau is loaded (/proc/modules)"}, pciEv...),
		Fix: append(j.driverInstallFix(),
			gpu.Step{Text: "If nouveau still loads after installing the driver, block it and rebuild the initramfs:",
				Command: `printf 'blacklist nouveau\noptions nouveau modeset=0\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot`})}
}

func (j *judge) judgeModuleNotLoaded(pciEv []string, nvEv string, nouveau bool) {
	f := j.f
	ev := append([]string{nvEv, "no nvidia kernel module in /proc/modules"}, pciEv...)
	switch {
	case nouveau:
		j.add(j.nouveauFinding(pciEv))
	case f.Host.SecureBoot == "enabled":
		j.add(gpu.Finding{ID: "secure_boot_blocks_module", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "Secure Boot is on and the NVIDIA kernel module is not loaded (an unsigned module is refused)",
			Evidence: append(ev, "Secure Boot: enabled (EFI SecureBoot variable)"),
			Fix: []gpu.Step{
				{Text: "Enroll the key DKMS signs modules with, restart, and accept the key in the blue MOK screen:", Command: "sudo mokutil --import /var/lib/dkms/mok.pub && sudo reboot"},
				{Text: "Or turn Secure Boot off in the firmware settings."}}})
	default:
		j.add(gpu.Finding{ID: "module_not_loaded", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "The NVIDIA driver is installed but its kernel module is not loaded",
			Evidence: ev,
			Fix: []gpu.Step{
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
	has := map[string]gpu.DeviceNode{}
	for _, n := range f.Driver.DeviceNodes {
		has[n.Path] = n
	}
	if _, ok := has["/dev/nvidia-uvm"]; !ok && len(f.Driver.DeviceNodes) > 0 {
		j.add(gpu.Finding{ID: "uvm_missing", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "/dev/nvidia-uvm is missing: CUDA programs cannot start",
			Evidence: j.nodeEvidence(),
			Fix:      []gpu.Step{{Text: "Load the unified-memory module and create its device file:", Command: "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0"}}})
	}
	var bad []string
	for _, n := range f.Driver.DeviceNodes {
		if !n.Readable || !n.Writable {
			bad = append(bad, fmt.Sprintf("%s %s readable=%v writable=%v", n.Path, n.Mode, n.Readable, n.Writable))
		}
	}
	if len(bad) > 0 {
		j.add(gpu.Finding{ID: "device_nodes_permission", Cause: gpu.CauseDriverMissing, Severity: gpu.SevWarning,
			Title:    "Some GPU device files cannot be opened by this user",
			Evidence: bad,
			Fix:      []gpu.Step{{Text: "Add yourself to the groups that own them, then log out and back in:", Command: "sudo usermod -aG video,render $USER"}}})
	}
}

// pciKnown: the PCI bus was read, so an empty NVIDIA list means none.
func (j *judge) pciKnown() bool {
	st, ok := j.f.Source("pci")
	return ok && st.OK
}

// noNVIDIAGPU reports a machine without an NVIDIA GPU, when the PCI bus
// was read.
func (j *judge) noNVIDIAGPU(nvEv string) {
	f := j.f
	if !j.pciKnown() {
		return // PCI unknown (a paste, or sysfs unreadable): the container rule or nothing
	}
	ev := []string{"no PCI display device with vendor 0x10de in /sys/bus/pci/devices", nvEv}
	var more []gpu.Step
	if f.Host.Container != "" {
		ev = append(ev, "inside a "+f.Host.Container+" container")
		more = append(more, gpu.Step{Text: "If the host does have an NVIDIA GPU, start this container with it (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."})
	}
	j.add(noGPUFinding(ev, more...))
}

// noGPUFinding is the finding of a machine without an NVIDIA GPU (Linux
// and Windows alike): the CPU works, a GPU machine is the way; more are
// the platform's further steps.
func noGPUFinding(ev []string, more ...gpu.Step) gpu.Finding {
	fix := append([]gpu.Step{
		{Text: "Training can only run on the CPU here; it works, slowly:", Command: "gpuwizard train --device cpu"},
		{Text: "For GPU training use a machine or cloud instance with an NVIDIA GPU, and run this check there."}}, more...)
	return gpu.Finding{ID: "no_nvidia_gpu", Cause: gpu.CauseOther, Severity: gpu.SevError,
		Title: "This machine has no NVIDIA GPU", Evidence: ev, Fix: fix}
}
