package paste

import (
	"regexp"

	"gpuwizard/gpu"
)

// winDriverLineRE reads the NVIDIA driver's version in Windows' form, as
// dxdiag ("Driver Version: 32.0.15.6094"), Device Manager and
// Win32_VideoController ("DriverVersion : 32.0.15.6094") show it.
var winDriverLineRE = regexp.MustCompile(`(?i)^Driver\s?Version\s*[:=]?\s*(\d{2}\.\d{1,2}\.\d{2}\.\d{4})\s*$`)

// windowsDriver records a driver version in Windows' form as NVIDIA's
// (32.0.15.6094 is 560.94), unless the report already gave NVIDIA's
// (nvidia-smi's header wins); the report is from Windows.
func (pp *parser) windowsDriver(m []string, s string) {
	v := gpu.WindowsDriverVersion(m[1])
	if v == "" {
		return // not an NVIDIA version (another vendor's driver)
	}
	pp.f.Host.OS = "windows"
	if pp.f.NVML.DriverVersion == "" {
		pp.f.NVML.DriverVersion = v
	}
	pp.quote("driver", s+" (NVIDIA "+v+")")
}
