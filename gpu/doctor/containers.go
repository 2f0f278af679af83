package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

func (j *judge) ruleWSLAndContainers() {
	f := j.f
	switch f.Host.WSL {
	case 1:
		j.add(gpu.Finding{ID: "wsl1_no_gpu", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "WSL 1 cannot use the GPU; only WSL 2 can",
			Evidence: []string{"kernel: " + f.Host.Kernel},
			Fix:      []gpu.Step{{Text: "In Windows PowerShell, convert the distribution to WSL 2 (replace Ubuntu with yours):", Command: "wsl --set-version Ubuntu 2"}}})
	case 2:
		if !f.Host.WSLLibCUDA && f.Origin != "paste" { // a report rarely shows the folder
			j.add(gpu.Finding{ID: "wsl_no_windows_driver", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
				Title:    "WSL 2 has no GPU driver: /usr/lib/wsl/lib/libcuda.so.1 is missing",
				Evidence: []string{"kernel: " + f.Host.Kernel, "/usr/lib/wsl/lib/libcuda.so.1: missing"},
				Fix:      []gpu.Step{{Text: "Install or update the NVIDIA driver on Windows (not inside WSL), then restart WSL from PowerShell:", Command: "wsl --shutdown"}}})
		}
		var inside []string
		for _, l := range f.CUDA.Libraries {
			if (l.Name == "libcuda" || l.Name == "libnvidia-ml") && l.Origin == "ldconfig" && !strings.HasPrefix(l.Path, "/usr/lib/wsl/") {
				inside = append(inside, l.Path)
			}
		}
		if len(inside) > 0 {
			j.add(gpu.Finding{ID: "wsl_linux_driver_inside", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
				Title:    "A Linux NVIDIA driver is installed inside WSL and shadows the Windows driver",
				Evidence: append([]string{"kernel: " + f.Host.Kernel}, inside...),
				Fix: []gpu.Step{{Text: "Remove the Linux driver packages inside WSL (keep the CUDA toolkit if you need it), then restart WSL:",
					Command: "sudo apt-get remove --purge '^nvidia-.*' '^libnvidia-.*' && wsl.exe --shutdown"}}})
		}
	}
	pciKnown := false
	if st, ok := f.Source("pci"); ok && st.OK {
		pciKnown = true
	}
	if f.Host.Container != "" && f.Host.WSL == 0 && len(f.Driver.DeviceNodes) == 0 && f.NVML.Status != gpu.NVMLOK && (len(j.nvidiaPCI()) > 0 || !pciKnown) {
		if _, ok := f.Source("driver"); ok {
			j.add(gpu.Finding{ID: "container_without_gpu", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
				Title:    "This container was started without access to the GPU",
				Evidence: []string{"container: " + f.Host.Container, "no /dev/nvidia* device files", "NVML: " + f.NVML.Status},
				Fix: []gpu.Step{{Text: "Start the container with the GPUs (NVIDIA Container Toolkit on the host):", Command: "docker run --gpus all ..."},
					{Text: "On the host, check that the toolkit works:", Command: "docker run --rm --gpus all ubuntu nvidia-smi"}}})
		}
	}
	if ev, ok := f.EnvVar("NVIDIA_VISIBLE_DEVICES"); ok && (ev.Value == "void" || ev.Value == "none" || ev.Value == "") && f.Host.Container != "" {
		j.add(gpu.Finding{ID: "nvidia_visible_devices_none", Cause: gpu.CauseWSLOrContainer, Severity: gpu.SevError,
			Title:    "NVIDIA_VISIBLE_DEVICES gives this container no GPU",
			Evidence: []string{fmt.Sprintf("NVIDIA_VISIBLE_DEVICES=%q", ev.Value)},
			Fix:      []gpu.Step{{Text: "Start the container with GPUs:", Command: "docker run --gpus all -e NVIDIA_VISIBLE_DEVICES=all ..."}}})
	}
}
