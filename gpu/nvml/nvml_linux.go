//go:build cgo

package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// New returns the machine's NVML: go-nvml over libnvidia-ml.so.1, loaded
// by Init.
func New() Library { return FromGoNVML(gonvml.New()) }

// FromGoNVML adapts any go-nvml library, the real one or one of go-nvml's
// mocks, to Library.
func FromGoNVML(lib gonvml.Interface) Library { return goLibrary{lib} }

type goLibrary struct{ l gonvml.Interface }

func (g goLibrary) Init() Return     { return Return(g.l.Init()) }
func (g goLibrary) Shutdown() Return { return Return(g.l.Shutdown()) }

func (g goLibrary) SystemGetDriverVersion() (string, Return) {
	v, r := g.l.SystemGetDriverVersion()
	return v, Return(r)
}

func (g goLibrary) SystemGetNVMLVersion() (string, Return) {
	v, r := g.l.SystemGetNVMLVersion()
	return v, Return(r)
}

func (g goLibrary) SystemGetCudaDriverVersion_v2() (int, Return) {
	v, r := g.l.SystemGetCudaDriverVersion_v2()
	return v, Return(r)
}

func (g goLibrary) SystemGetCudaDriverVersion() (int, Return) {
	v, r := g.l.SystemGetCudaDriverVersion()
	return v, Return(r)
}

func (g goLibrary) DeviceGetCount() (int, Return) {
	n, r := g.l.DeviceGetCount()
	return n, Return(r)
}

func (g goLibrary) DeviceGetHandleByIndex(i int) (Device, Return) {
	d, r := g.l.DeviceGetHandleByIndex(i)
	if r != gonvml.SUCCESS {
		return nil, Return(r)
	}
	return goDevice{d}, Success
}

type goDevice struct{ d gonvml.Device }

func (g goDevice) GetName() (string, Return) {
	v, r := g.d.GetName()
	return v, Return(r)
}

func (g goDevice) GetUUID() (string, Return) {
	v, r := g.d.GetUUID()
	return v, Return(r)
}

func (g goDevice) GetPCIBusID() (string, Return) {
	p, r := g.d.GetPciInfo()
	return cString(p.BusId[:]), Return(r)
}

func (g goDevice) GetCudaComputeCapability() (int, int, Return) {
	ma, mi, r := g.d.GetCudaComputeCapability()
	return ma, mi, Return(r)
}

func (g goDevice) GetMemoryInfo() (Memory, Return) {
	m, r := g.d.GetMemoryInfo()
	return Memory{Total: m.Total, Free: m.Free, Used: m.Used}, Return(r)
}

func (g goDevice) GetUtilizationRates() (Utilization, Return) {
	u, r := g.d.GetUtilizationRates()
	return Utilization{GPU: u.Gpu, Memory: u.Memory}, Return(r)
}

func (g goDevice) GetTemperature() (uint32, Return) {
	v, r := g.d.GetTemperature(gonvml.TEMPERATURE_GPU)
	return v, Return(r)
}

func (g goDevice) GetPowerUsage() (uint32, Return) {
	v, r := g.d.GetPowerUsage()
	return v, Return(r)
}

func (g goDevice) GetCurrentClocksEventReasons() (uint64, Return) {
	v, r := g.d.GetCurrentClocksEventReasons()
	return v, Return(r)
}

func (g goDevice) GetCurrentClocksThrottleReasons() (uint64, Return) {
	v, r := g.d.GetCurrentClocksThrottleReasons()
	return v, Return(r)
}

func (g goDevice) GetMigMode() (int, int, Return) {
	cur, pending, r := g.d.GetMigMode()
	return cur, pending, Return(r)
}

func (g goDevice) GetComputeRunningProcesses() ([]ProcessInfo, Return) {
	ps, r := g.d.GetComputeRunningProcesses()
	if r != gonvml.SUCCESS {
		return nil, Return(r)
	}
	out := make([]ProcessInfo, len(ps))
	for i, p := range ps {
		out[i] = ProcessInfo{PID: p.Pid, UsedGPUMemory: p.UsedGpuMemory}
	}
	return out, Success
}
