package doctor

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"gpuwizard/gpu"
)

// HealthSources are the probe sources the health check runs: the driver
// layer alone (no Python, no library scan), in milliseconds. Windows has
// nvidia_smi where Linux has driver.
var HealthSources = []string{"nvml", "pci", "driver", "nvidia_smi", "host"}

// healthCauses are the causes that make a node unhealthy: the driver
// layer, not the frameworks (a user's wheel is no reason to drain a node).
var healthCauses = map[gpu.Cause]bool{gpu.CauseDriverMissing: true, gpu.CauseWSLOrContainer: true, gpu.CauseOther: true}

// Health judges a node for a scheduler's health check: healthy when the
// driver answers and every NVIDIA GPU on the PCI bus answers through it
// (at least want of them, when want > 0). line is one line to show or to
// drain the node with: "OK: ..." or the problem and the finding's ID.
func Health(r gpu.Report, want int) (healthy bool, line string) {
	for _, f := range r.Findings {
		if f.Severity == gpu.SevError && healthCauses[f.Cause] && !strings.HasPrefix(f.ID, "deep_") {
			return false, oneLine(f.Title + " [" + f.ID + "]")
		}
	}
	facts := r.Facts
	if facts == nil || facts.NVML.Status != gpu.NVMLOK {
		return false, "the NVIDIA driver did not answer [nvml_unknown]"
	}
	got := len(facts.NVML.GPUs)
	if missing := missingOnBus(facts); len(missing) > 0 {
		return false, oneLine(fmt.Sprintf("%d NVIDIA GPUs on the PCI bus, %d answer through the driver (silent: %s) [gpu_missing]",
			got+len(missing), got, strings.Join(missing, ", ")))
	}
	if got < want {
		return false, fmt.Sprintf("%d GPUs answer through the driver, %d expected [gpu_count]", got, want)
	}
	if got == 0 {
		return false, "the driver answers but shows no GPU [nvml_no_gpus]"
	}
	return true, oneLine(fmt.Sprintf("OK: %d× %s through driver %s", got, facts.NVML.GPUs[0].Name, facts.NVML.DriverVersion))
}

// missingOnBus are the PCI addresses of NVIDIA GPUs that NVML does not
// list (a GPU fallen off the bus, or one the driver failed to bring up).
// None when NVML gives no bus IDs to compare.
func missingOnBus(f *gpu.Facts) []string {
	seen := map[string]bool{}
	for _, g := range f.NVML.GPUs {
		if g.PCIBusID == "" {
			return nil
		}
		seen[busKey(g.PCIBusID)] = true
	}
	var out []string
	for _, d := range f.PCI {
		if d.IsGPU() && !seen[busKey(d.Address)] {
			out = append(out, d.Address)
		}
	}
	return out
}

// busKey is a PCI address without its domain, lowercase: NVML writes
// "00000000:41:00.0", sysfs "0000:41:00.0".
func busKey(addr string) string {
	addr = strings.ToLower(addr)
	if i := strings.Index(addr, ":"); i >= 0 && strings.Count(addr, ":") == 2 {
		addr = addr[i+1:]
	}
	return addr
}

// oneLine makes s one printable line, at most 200 bytes (a Slurm drain
// reason).
func oneLine(s string) string {
	s = strings.Join(strings.Fields(gpu.Sanitize(s)), " ")
	if len(s) > 200 {
		n := 197
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return s
}
