package doctor

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
)

// Commands a Windows user pastes into PowerShell to see the GPU and its
// driver as Windows does.
const (
	psAdapters = "Get-CimInstance Win32_VideoController | Format-List Name, AdapterCompatibility, DriverVersion, Status, ConfigManagerErrorCode"
	psRestart  = "Restart-Computer"
)

// windowsDriverFix installs or repairs NVIDIA's Windows driver.
func windowsDriverFix() []gpu.Step {
	return []gpu.Step{
		{Text: "Download the driver for this GPU from https://www.nvidia.com/Download/index.aspx (or the NVIDIA App), run it, choose Custom → \"Perform a clean installation\", then restart. See what Windows shows for the GPU:", Command: psAdapters},
		{Text: "After the restart, check that the driver answers:", Command: "nvidia-smi"}}
}

// judgeWindowsDriver judges the driver of a Windows machine the probe
// read: NVML (nvml.dll, installed with the driver) and the display
// adapters Windows lists, which tell an NVIDIA GPU without NVIDIA's
// driver (Microsoft's basic driver, Device Manager code 28) or one
// Windows stopped (code 43) from a machine without an NVIDIA GPU. It
// reports whether the driver answers.
func (j *judge) judgeWindowsDriver() bool {
	nv := j.f.NVML
	nvEv := "NVML: " + nv.Status
	if nv.Error != "" {
		nvEv = "NVML (nvml.dll): " + nv.Error
	}
	var nvidia []gpu.DisplayAdapter
	var adEv []string
	for _, a := range j.f.Windows.Adapters {
		if a.IsNVIDIA() {
			nvidia = append(nvidia, a)
			adEv = append(adEv, adapterEvidence(a))
		}
	}
	switch {
	case nv.Status == gpu.NVMLOK && len(nv.GPUs) > 0:
		return true
	case nv.Status == gpu.NVMLOK:
		j.add(gpu.Finding{ID: "nvml_no_gpus", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "The NVIDIA driver is installed but reports no GPU",
			Evidence: append([]string{"NVML: driver " + nv.DriverVersion + ", 0 GPUs"}, adEv...),
			Fix:      windowsDriverFix()})
		return false
	}
	for _, a := range nvidia {
		if a.ErrorCode == 43 {
			j.add(gpu.Finding{ID: "windows_gpu_stopped_code_43", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
				Title:    fmt.Sprintf("Windows has stopped the GPU %s (Device Manager code 43: the device reported a problem)", a.Name),
				Evidence: append(adEv, nvEv),
				Fix: append(windowsDriverFix(), gpu.Step{
					Text: "If a clean driver installation does not help: power the machine off, reseat the GPU and its power cables, and check it in another slot or machine (code 43 also means a failing card)."})})
			return false
		}
	}
	for _, a := range nvidia {
		if a.Provider != "NVIDIA" || a.ErrorCode == 28 {
			j.add(gpu.Finding{ID: "driver_not_installed", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
				Title:    fmt.Sprintf("An NVIDIA GPU is present but NVIDIA's driver is not installed (Windows drives it with %s)", providerWords(a)),
				Evidence: append(adEv, nvEv),
				Fix:      windowsDriverFix()})
			return false
		}
	}
	switch {
	case len(nvidia) > 0:
		j.add(gpu.Finding{ID: "nvml_error", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "NVIDIA's driver drives the GPU but its management library does not answer (a damaged driver installation)",
			Evidence: append(adEv, nvEv),
			Fix:      windowsDriverFix()})
	case j.pciKnown():
		j.add(noGPUFinding([]string{"display adapters: " + adapterNames(j.f.Windows.Adapters), nvEv}))
	default:
		j.add(gpu.Finding{ID: "driver_not_installed", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError,
			Title:    "NVIDIA's driver is not installed (nvml.dll was not found), or this machine has no NVIDIA GPU",
			Evidence: []string{nvEv, "the display adapters could not be listed"},
			Fix:      windowsDriverFix()})
	}
	return false
}

func adapterEvidence(a gpu.DisplayAdapter) string {
	s := fmt.Sprintf("display adapter %q (%s)", a.Name, a.PNPDeviceID)
	if a.Provider != "" {
		s += ", driver provider " + a.Provider
	}
	if a.DriverVersion != "" {
		s += ", version " + a.DriverVersion
		if a.Driver != "" {
			s += " (NVIDIA " + a.Driver + ")"
		}
	}
	if a.ErrorCode != 0 {
		s += fmt.Sprintf(", Device Manager code %d", a.ErrorCode)
	}
	return s
}

func adapterNames(as []gpu.DisplayAdapter) string {
	if len(as) == 0 {
		return "none"
	}
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// providerWords names what drives an adapter that NVIDIA's driver does not.
func providerWords(a gpu.DisplayAdapter) string {
	switch {
	case a.ErrorCode == 28 || a.Provider == "":
		return "no driver"
	case strings.Contains(a.Provider, "Standard display"):
		return "Microsoft's basic display driver"
	}
	return a.Provider + "'s driver"
}
