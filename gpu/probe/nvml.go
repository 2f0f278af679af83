package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"strconv"

	"gpuwizard/gpu/nvml"
)

// nvmlStatus names an NVML return code the way Facts records it.
func nvmlStatus(r nvml.Return) string {
	switch r {
	case nvml.Success:
		return gpu.NVMLOK
	case nvml.ErrorLibraryNotFound:
		return gpu.NVMLLibraryNotFound
	case nvml.ErrorDriverNotLoaded:
		return gpu.NVMLDriverNotLoaded
	case nvml.ErrorNoPermission:
		return gpu.NVMLNoPermission
	case nvml.ErrorLibRMVersionMismatch:
		return gpu.NVMLRMMismatch
	case nvml.ErrorGPUIsLost:
		return gpu.NVMLGPULost
	}
	return gpu.NVMLError
}

// nvmlText is a readable form of a return code.
func nvmlText(r nvml.Return) string {
	return fmt.Sprintf("%s (NVML code %d)", r, int(r))
}

// call runs one NVML getter, turning a panic (a mock without the method, a
// symbol missing from an old driver) into NOT_SUPPORTED.
func call[T any](f func() (T, nvml.Return)) (v T, r nvml.Return) {
	defer func() {
		if recover() != nil {
			r = nvml.ErrorNotSupported
		}
	}()
	return f()
}

func (p *prober) probeNVML(ctx context.Context) (func(*gpu.Facts), error) {
	lib := p.o.NVML
	if lib == nil {
		lib = nvml.New()
	}
	var nf gpu.NVMLFacts
	var crash any
	ret := func() (r nvml.Return) {
		defer func() {
			if crash = recover(); crash != nil {
				r = nvml.ErrorUnknown
			}
		}()
		return lib.Init()
	}()
	if crash != nil {
		nf.Status, nf.Error = gpu.NVMLError, fmt.Sprintf("the NVML library crashed while starting: %v", crash)
		return func(f *gpu.Facts) { f.NVML = nf }, nil
	}
	if ret != nvml.Success {
		nf.Status = nvmlStatus(ret)
		nf.Error = nvmlText(ret)
		// A failure code is an answer about the machine, not a probe failure.
		return func(f *gpu.Facts) { f.NVML = nf }, nil
	}
	defer func() {
		defer func() { _ = recover() }()
		lib.Shutdown()
	}()
	nf.Status = gpu.NVMLOK
	if v, r := call(lib.SystemGetDriverVersion); r == nvml.Success {
		nf.DriverVersion = v
	}
	if v, r := call(lib.SystemGetNVMLVersion); r == nvml.Success {
		nf.NVMLVersion = v
	}
	if v, r := call(lib.SystemGetCudaDriverVersion_v2); r == nvml.Success {
		nf.CUDADriverVersion = gpu.CUDAFromInt(v)
	} else if v, r := call(lib.SystemGetCudaDriverVersion); r == nvml.Success {
		nf.CUDADriverVersion = gpu.CUDAFromInt(v)
	}
	n, r := call(lib.DeviceGetCount)
	if r != nvml.Success {
		nf.Status = nvmlStatus(r)
		nf.Error = "counting GPUs: " + nvmlText(r)
		return func(f *gpu.Facts) { f.NVML = nf }, nil
	}
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("nvml: %w", ErrTimeout)
		}
		dev, r := call(func() (nvml.Device, nvml.Return) { return lib.DeviceGetHandleByIndex(i) })
		if r != nvml.Success {
			nf.GPUs = append(nf.GPUs, gpu.GPU{Index: i, Errors: []string{"handle: " + nvmlText(r)}})
			if r == nvml.ErrorGPUIsLost {
				nf.Status = gpu.NVMLGPULost
			}
			continue
		}
		nf.GPUs = append(nf.GPUs, readGPU(i, dev))
	}
	return func(f *gpu.Facts) { f.NVML = nf }, nil
}

// readGPU reads every value one device gives; what it refuses is noted.
func readGPU(i int, d nvml.Device) gpu.GPU {
	g := gpu.GPU{Index: i}
	miss := func(what string, r nvml.Return) {
		if r != nvml.ErrorNotSupported {
			g.Errors = append(g.Errors, what+": "+nvmlText(r))
		}
	}
	if v, r := call(d.GetName); r == nvml.Success {
		g.Name = v
	} else {
		miss("name", r)
	}
	if v, r := call(d.GetUUID); r == nvml.Success {
		g.UUID = v
	} else {
		miss("uuid", r)
	}
	if v, r := call(d.GetPCIBusID); r == nvml.Success {
		g.PCIBusID = v
	} else {
		miss("pci", r)
	}
	if maj, mnr, r := func() (a, b int, r nvml.Return) {
		defer func() {
			if recover() != nil {
				r = nvml.ErrorNotSupported
			}
		}()
		return d.GetCudaComputeCapability()
	}(); r == nvml.Success {
		g.CC = strconv.Itoa(maj) + "." + strconv.Itoa(mnr)
	} else {
		miss("compute capability", r)
	}
	if m, r := call(d.GetMemoryInfo); r == nvml.Success {
		g.MemoryTotalMiB, g.MemoryUsedMiB, g.MemoryFreeMiB = m.Total>>20, m.Used>>20, m.Free>>20
	} else {
		miss("memory", r)
	}
	if u, r := call(d.GetUtilizationRates); r == nvml.Success {
		v := int(u.GPU)
		g.UtilizationPct = &v
	}
	if t, r := call(d.GetTemperature); r == nvml.Success {
		v := int(t)
		g.TemperatureC = &v
	}
	if pw, r := call(d.GetPowerUsage); r == nvml.Success {
		v := float64(pw) / 1000
		g.PowerW = &v
	}
	if tr, r := call(d.GetCurrentClocksEventReasons); r == nvml.Success {
		g.ThrottleReasons = throttleNames(tr)
	} else if tr, r := call(d.GetCurrentClocksThrottleReasons); r == nvml.Success {
		g.ThrottleReasons = throttleNames(tr)
	}
	if cur, _, r := func() (a, b int, r nvml.Return) {
		defer func() {
			if recover() != nil {
				r = nvml.ErrorNotSupported
			}
		}()
		return d.GetMigMode()
	}(); r == nvml.Success {
		on := cur == nvml.MIGEnable
		g.MIGEnabled = &on
	}
	if ps, r := call(d.GetComputeRunningProcesses); r == nvml.Success {
		for _, pi := range ps {
			g.Processes = append(g.Processes, gpu.Process{PID: pi.PID, UsedMiB: pi.UsedMiB()})
		}
	} else {
		miss("processes", r)
	}
	return g
}

// throttleNames lists the clock event reasons that slow a GPU down. Idle
// and application-clock settings are not slowdowns and are left out.
func throttleNames(mask uint64) []string {
	names := []struct {
		bit  uint64
		name string
	}{
		{0x4, "software power cap"},
		{0x8, "hardware slowdown"},
		{0x10, "sync boost"},
		{0x20, "software thermal slowdown"},
		{0x40, "hardware thermal slowdown"},
		{0x80, "hardware power brake"},
		{0x100, "display clock setting"},
	}
	var out []string
	for _, n := range names {
		if mask&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}
