//go:build cgo

package nvml

import (
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// TestFromGoNVML: go-nvml's mocks (and so the real go-nvml) answer through
// Library with the same values and codes.
func TestFromGoNVML(t *testing.T) {
	s := dgxa100.New()
	dev := s.Devices[3].(*dgxa100.Device)
	dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 99, UsedGpuMemory: 7 << 20}}, gonvml.SUCCESS
	}
	dev.GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
		var p gonvml.PciInfo
		copy(p.BusId[:], "00:04\x00")
		return p, gonvml.SUCCESS
	}
	dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		return gonvml.Utilization{Gpu: 30, Memory: 4}, gonvml.SUCCESS
	}
	l := FromGoNVML(s)
	if r := l.Init(); r != Success {
		t.Fatalf("Init: %v", r)
	}
	if v, r := l.SystemGetDriverVersion(); v != "550.54.15" || r != Success {
		t.Errorf("driver %q %v", v, r)
	}
	if n, r := l.DeviceGetCount(); n != 8 || r != Success {
		t.Errorf("count %d %v", n, r)
	}
	if _, r := l.DeviceGetHandleByIndex(9); r != ErrorInvalidArgument {
		t.Errorf("GPU 9 of 8: %v", r)
	}
	d, r := l.DeviceGetHandleByIndex(3)
	if r != Success {
		t.Fatal(r)
	}
	if ma, mi, r := d.GetCudaComputeCapability(); ma != 8 || mi != 0 || r != Success {
		t.Errorf("cc %d.%d %v", ma, mi, r)
	}
	if m, r := d.GetMemoryInfo(); m.Total != 42949672960 || r != Success {
		t.Errorf("memory %+v %v", m, r)
	}
	if id, r := d.GetPCIBusID(); id != "00:04" || r != Success {
		t.Errorf("bus id %q %v", id, r)
	}
	if u, r := d.GetUtilizationRates(); u != (Utilization{GPU: 30, Memory: 4}) || r != Success {
		t.Errorf("utilisation %+v %v", u, r)
	}
	if ps, r := d.GetComputeRunningProcesses(); len(ps) != 1 || ps[0] != (ProcessInfo{PID: 99, UsedGPUMemory: 7 << 20}) || r != Success {
		t.Errorf("processes %+v %v", ps, r)
	}
	s.InitFunc = func() gonvml.Return { return gonvml.ERROR_LIBRARY_NOT_FOUND }
	if r := l.Init(); r != ErrorLibraryNotFound {
		t.Errorf("a failing Init: %v, want ERROR_LIBRARY_NOT_FOUND", r)
	}
}
