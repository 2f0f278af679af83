// Package nvmlfake plays NVML in tests, on every platform: a Library whose
// every answer is a field or a function to set, in the manner of go-nvml's
// mocks. A method whose function is nil panics, as a go-nvml mock without
// the method does, so callers' recovery stays tested.
package nvmlfake

import (
	"fmt"
	"reflect"

	"gpuwizard/gpu/nvml"
)

// Library is a fake NVML. DGXA100 fills it as go-nvml's DGX A100 mock is
// filled.
type Library struct {
	Devices []*Device

	InitFunc                          func() nvml.Return
	ShutdownFunc                      func() nvml.Return
	SystemGetDriverVersionFunc        func() (string, nvml.Return)
	SystemGetNVMLVersionFunc          func() (string, nvml.Return)
	SystemGetCudaDriverVersion_v2Func func() (int, nvml.Return)
	SystemGetCudaDriverVersionFunc    func() (int, nvml.Return)
	DeviceGetCountFunc                func() (int, nvml.Return)
	DeviceGetHandleByIndexFunc        func(int) (nvml.Device, nvml.Return)
}

// Device is a fake GPU.
type Device struct {
	GetNameFunc                         func() (string, nvml.Return)
	GetUUIDFunc                         func() (string, nvml.Return)
	GetPCIBusIDFunc                     func() (string, nvml.Return)
	GetCudaComputeCapabilityFunc        func() (int, int, nvml.Return)
	GetMemoryInfoFunc                   func() (nvml.Memory, nvml.Return)
	GetUtilizationRatesFunc             func() (nvml.Utilization, nvml.Return)
	GetTemperatureFunc                  func() (uint32, nvml.Return)
	GetPowerUsageFunc                   func() (uint32, nvml.Return)
	GetCurrentClocksEventReasonsFunc    func() (uint64, nvml.Return)
	GetCurrentClocksThrottleReasonsFunc func() (uint64, nvml.Return)
	GetMigModeFunc                      func() (int, int, nvml.Return)
	GetComputeRunningProcessesFunc      func() ([]nvml.ProcessInfo, nvml.Return)
}

var (
	_ nvml.Library = (*Library)(nil)
	_ nvml.Device  = (*Device)(nil)
)

// GPU describes a fake GPU's fixed answers.
type GPU struct {
	Name      string
	UUID      string
	BusID     string
	CC        [2]int
	Memory    nvml.Memory
	MIGMode   int
	Processes []nvml.ProcessInfo
}

// NewDevice is a GPU that answers g's values; the getters g does not
// describe (utilisation, temperature, power, clock reasons) are nil.
func NewDevice(g GPU) *Device {
	return &Device{
		GetNameFunc:                  func() (string, nvml.Return) { return g.Name, nvml.Success },
		GetUUIDFunc:                  func() (string, nvml.Return) { return g.UUID, nvml.Success },
		GetPCIBusIDFunc:              func() (string, nvml.Return) { return g.BusID, nvml.Success },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return g.CC[0], g.CC[1], nvml.Success },
		GetMemoryInfoFunc:            func() (nvml.Memory, nvml.Return) { return g.Memory, nvml.Success },
		GetMigModeFunc:               func() (int, int, nvml.Return) { return g.MIGMode, g.MIGMode, nvml.Success },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return g.Processes, nvml.Success
		},
	}
}

// New is a machine with the given driver, CUDA version (1000*major +
// 10*minor) and GPUs, whose NVML starts. Like go-nvml's DGX A100 mock, it
// has no SystemGetCudaDriverVersion_v2 and its NVML version is
// 12.550.54.15 whatever the driver.
func New(driver string, cuda int, devs ...*Device) *Library {
	l := &Library{Devices: devs}
	l.InitFunc = func() nvml.Return { return nvml.Success }
	l.ShutdownFunc = func() nvml.Return { return nvml.Success }
	l.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return driver, nvml.Success }
	l.SystemGetNVMLVersionFunc = func() (string, nvml.Return) { return "12.550.54.15", nvml.Success }
	l.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return cuda, nvml.Success }
	l.DeviceGetCountFunc = func() (int, nvml.Return) { return len(l.Devices), nvml.Success }
	l.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < 0 || i >= len(l.Devices) {
			return nil, nvml.ErrorInvalidArgument
		}
		return l.Devices[i], nvml.Success
	}
	return l
}

// DGXA100 answers as go-nvml's DGX A100 mock does: driver 550.54.15 (CUDA
// 12.4), eight "Mock NVIDIA A100-SXM4-40GB" of compute capability 8.0 and
// 40 GiB, MIG off, no PCI bus id, and no utilisation, temperature, power,
// clock reasons or process list (those calls panic).
func DGXA100() *Library {
	devs := make([]*Device, 8)
	for i := range devs {
		d := NewDevice(GPU{
			Name: "Mock NVIDIA A100-SXM4-40GB", UUID: fmt.Sprintf("GPU-%08x-a100-4000-8000-%012x", i, i),
			CC: [2]int{8, 0}, Memory: nvml.Memory{Total: 40 << 30}, MIGMode: nvml.MIGDisable,
		})
		d.GetComputeRunningProcessesFunc = nil
		devs[i] = d
	}
	return New("550.54.15", 12040, devs...)
}

// Failing is an NVML whose Init answers r (a machine without the driver:
// nvml.ErrorLibraryNotFound).
func Failing(r nvml.Return) *Library {
	l := New("", 0)
	l.InitFunc = func() nvml.Return { return r }
	return l
}

func must[F any](f F, name string) F {
	if reflect.ValueOf(f).IsNil() {
		panic("nvmlfake: " + name + " is not set")
	}
	return f
}

func (l *Library) Init() nvml.Return     { return must(l.InitFunc, "InitFunc")() }
func (l *Library) Shutdown() nvml.Return { return must(l.ShutdownFunc, "ShutdownFunc")() }
func (l *Library) SystemGetDriverVersion() (string, nvml.Return) {
	return must(l.SystemGetDriverVersionFunc, "SystemGetDriverVersionFunc")()
}
func (l *Library) SystemGetNVMLVersion() (string, nvml.Return) {
	return must(l.SystemGetNVMLVersionFunc, "SystemGetNVMLVersionFunc")()
}
func (l *Library) SystemGetCudaDriverVersion_v2() (int, nvml.Return) {
	return must(l.SystemGetCudaDriverVersion_v2Func, "SystemGetCudaDriverVersion_v2Func")()
}
func (l *Library) SystemGetCudaDriverVersion() (int, nvml.Return) {
	return must(l.SystemGetCudaDriverVersionFunc, "SystemGetCudaDriverVersionFunc")()
}
func (l *Library) DeviceGetCount() (int, nvml.Return) {
	return must(l.DeviceGetCountFunc, "DeviceGetCountFunc")()
}
func (l *Library) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	return must(l.DeviceGetHandleByIndexFunc, "DeviceGetHandleByIndexFunc")(i)
}

func (d *Device) GetName() (string, nvml.Return) { return must(d.GetNameFunc, "GetNameFunc")() }
func (d *Device) GetUUID() (string, nvml.Return) { return must(d.GetUUIDFunc, "GetUUIDFunc")() }
func (d *Device) GetPCIBusID() (string, nvml.Return) {
	return must(d.GetPCIBusIDFunc, "GetPCIBusIDFunc")()
}
func (d *Device) GetCudaComputeCapability() (int, int, nvml.Return) {
	return must(d.GetCudaComputeCapabilityFunc, "GetCudaComputeCapabilityFunc")()
}
func (d *Device) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	return must(d.GetMemoryInfoFunc, "GetMemoryInfoFunc")()
}
func (d *Device) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	return must(d.GetUtilizationRatesFunc, "GetUtilizationRatesFunc")()
}
func (d *Device) GetTemperature() (uint32, nvml.Return) {
	return must(d.GetTemperatureFunc, "GetTemperatureFunc")()
}
func (d *Device) GetPowerUsage() (uint32, nvml.Return) {
	return must(d.GetPowerUsageFunc, "GetPowerUsageFunc")()
}
func (d *Device) GetCurrentClocksEventReasons() (uint64, nvml.Return) {
	return must(d.GetCurrentClocksEventReasonsFunc, "GetCurrentClocksEventReasonsFunc")()
}
func (d *Device) GetCurrentClocksThrottleReasons() (uint64, nvml.Return) {
	return must(d.GetCurrentClocksThrottleReasonsFunc, "GetCurrentClocksThrottleReasonsFunc")()
}
func (d *Device) GetMigMode() (int, int, nvml.Return) {
	return must(d.GetMigModeFunc, "GetMigModeFunc")()
}
func (d *Device) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return must(d.GetComputeRunningProcessesFunc, "GetComputeRunningProcessesFunc")()
}
