package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlStatus names an NVML return code the way Facts records it.
func nvmlStatus(r nvml.Return) string {
	switch r {
	case nvml.SUCCESS:
		return gpu.NVMLOK
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return gpu.NVMLLibraryNotFound
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return gpu.NVMLDriverNotLoaded
	case nvml.ERROR_NO_PERMISSION:
		return gpu.NVMLNoPermission
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return gpu.NVMLRMMismatch
	case nvml.ERROR_GPU_IS_LOST:
		return gpu.NVMLGPULost
	}
	return gpu.NVMLError
}

// nvmlText is a readable form of a return code that never panics.
func nvmlText(r nvml.Return) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("NVML error %d", int(r))
		}
	}()
	return fmt.Sprintf("%s (NVML code %d)", nvml.ErrorString(r), int(r))
}

// call runs one NVML getter, turning a panic (a mock without the method, a
// symbol missing from an old driver) into NOT_SUPPORTED.
func call[T any](f func() (T, nvml.Return)) (v T, r nvml.Return) {
	defer func() {
		if recover() != nil {
			r = nvml.ERROR_NOT_SUPPORTED
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
				r = nvml.ERROR_UNKNOWN
			}
		}()
		return lib.Init()
	}()
	if crash != nil {
		nf.Status, nf.Error = gpu.NVMLError, fmt.Sprintf("the NVML library crashed while starting: %v", crash)
		return func(f *gpu.Facts) { f.NVML = nf }, nil
	}
	if ret != nvml.SUCCESS {
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
	if v, r := call(lib.SystemGetDriverVersion); r == nvml.SUCCESS {
		nf.DriverVersion = v
	}
	if v, r := call(lib.SystemGetNVMLVersion); r == nvml.SUCCESS {
		nf.NVMLVersion = v
	}
	if v, r := call(lib.SystemGetCudaDriverVersion_v2); r == nvml.SUCCESS {
		nf.CUDADriverVersion = gpu.CUDAFromInt(v)
	} else if v, r := call(lib.SystemGetCudaDriverVersion); r == nvml.SUCCESS {
		nf.CUDADriverVersion = gpu.CUDAFromInt(v)
	}
	n, r := call(lib.DeviceGetCount)
	if r != nvml.SUCCESS {
		nf.Status = nvmlStatus(r)
		nf.Error = "counting GPUs: " + nvmlText(r)
		return func(f *gpu.Facts) { f.NVML = nf }, nil
	}
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("nvml: %w", ErrTimeout)
		}
		dev, r := call(func() (nvml.Device, nvml.Return) { return lib.DeviceGetHandleByIndex(i) })
		if r != nvml.SUCCESS {
			nf.GPUs = append(nf.GPUs, gpu.GPU{Index: i, Errors: []string{"handle: " + nvmlText(r)}})
			if r == nvml.ERROR_GPU_IS_LOST {
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
		if r != nvml.ERROR_NOT_SUPPORTED {
			g.Errors = append(g.Errors, what+": "+nvmlText(r))
		}
	}
	if v, r := call(d.GetName); r == nvml.SUCCESS {
		g.Name = v
	} else {
		miss("name", r)
	}
	if v, r := call(d.GetUUID); r == nvml.SUCCESS {
		g.UUID = v
	} else {
		miss("uuid", r)
	}
	if v, r := call(d.GetPciInfo); r == nvml.SUCCESS {
		g.PCIBusID = cString(v.BusId[:])
	} else {
		miss("pci", r)
	}
	if maj, mnr, r := func() (a, b int, r nvml.Return) {
		defer func() {
			if recover() != nil {
				r = nvml.ERROR_NOT_SUPPORTED
			}
		}()
		return d.GetCudaComputeCapability()
	}(); r == nvml.SUCCESS {
		g.CC = strconv.Itoa(maj) + "." + strconv.Itoa(mnr)
	} else {
		miss("compute capability", r)
	}
	if m, r := call(d.GetMemoryInfo); r == nvml.SUCCESS {
		g.MemoryTotalMiB, g.MemoryUsedMiB, g.MemoryFreeMiB = m.Total>>20, m.Used>>20, m.Free>>20
	} else {
		miss("memory", r)
	}
	if u, r := call(d.GetUtilizationRates); r == nvml.SUCCESS {
		v := int(u.Gpu)
		g.UtilizationPct = &v
	}
	if t, r := call(func() (uint32, nvml.Return) { return d.GetTemperature(nvml.TEMPERATURE_GPU) }); r == nvml.SUCCESS {
		v := int(t)
		g.TemperatureC = &v
	}
	if pw, r := call(d.GetPowerUsage); r == nvml.SUCCESS {
		v := float64(pw) / 1000
		g.PowerW = &v
	}
	if tr, r := call(d.GetCurrentClocksEventReasons); r == nvml.SUCCESS {
		g.ThrottleReasons = throttleNames(tr)
	} else if tr, r := call(d.GetCurrentClocksThrottleReasons); r == nvml.SUCCESS {
		g.ThrottleReasons = throttleNames(tr)
	}
	if cur, _, r := func() (a, b int, r nvml.Return) {
		defer func() {
			if recover() != nil {
				r = nvml.ERROR_NOT_SUPPORTED
			}
		}()
		return d.GetMigMode()
	}(); r == nvml.SUCCESS {
		on := cur == nvml.DEVICE_MIG_ENABLE
		g.MIGEnabled = &on
	}
	if ps, r := call(d.GetComputeRunningProcesses); r == nvml.SUCCESS {
		for _, pi := range ps {
			g.Processes = append(g.Processes, gpu.Process{PID: pi.Pid, UsedMiB: pi.UsedGpuMemory >> 20})
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

func cString[T ~int8 | ~uint8](b []T) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// nameProcesses fills process names from /proc when the PID is visible
// (in a container, NVML reports host PIDs that are not).
func (p *prober) nameProcesses(f *gpu.Facts) {
	for gi := range f.NVML.GPUs {
		for pi := range f.NVML.GPUs[gi].Processes {
			pr := &f.NVML.GPUs[gi].Processes[pi]
			if b, err := p.readFile(fmt.Sprintf("/proc/%d/comm", pr.PID), capSmall); err == nil {
				pr.Name = strings.TrimSpace(string(b))
			}
		}
	}
}
