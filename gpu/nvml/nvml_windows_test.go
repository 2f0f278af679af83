package nvml

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"
)

// stubDir returns a folder holding the stub nvml.dll of testdata/nvml_stub.c
// built as variant ("GPU", "OLD" or "NONE"): the one make test-windows
// built (GPUWIZARD_NVML_STUBS names the folder of its variants), else one
// built here with a mingw gcc found on PATH.
func stubDir(t *testing.T, variant string) string {
	t.Helper()
	if root := os.Getenv("GPUWIZARD_NVML_STUBS"); root != "" {
		dir := filepath.Join(root, variant)
		if _, err := os.Stat(filepath.Join(dir, "nvml.dll")); err != nil {
			t.Fatalf("GPUWIZARD_NVML_STUBS=%s lacks the %s stub: %v (make test-windows builds it)", root, variant, err)
		}
		return dir
	}
	for _, cc := range []string{"x86_64-w64-mingw32-gcc", "gcc"} {
		if _, err := exec.LookPath(cc); err != nil {
			continue
		}
		dir := filepath.Join(t.TempDir(), variant)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(cc, "-shared", "-O2", "-DSTUB_"+variant, "-o", filepath.Join(dir, "nvml.dll"),
			filepath.Join("testdata", "nvml_stub.c")).CombinedOutput()
		if err != nil {
			t.Fatalf("building the stub nvml.dll with %s: %v\n%s", cc, err, out)
		}
		return dir
	}
	t.Fatal("no stub nvml.dll: run make test-windows (it sets GPUWIZARD_NVML_STUBS), or put mingw's gcc on PATH")
	return ""
}

func TestStructLayouts(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"nvmlMemory_t", unsafe.Sizeof(cMemory{}), 24},
		{"nvmlUtilization_t", unsafe.Sizeof(cUtilization{}), 8},
		{"nvmlPciInfo_t", unsafe.Sizeof(cPCIInfo{}), 68},
		{"nvmlProcessInfo_v1_t", unsafe.Sizeof(cProcessInfoV1{}), 16},
		{"nvmlProcessInfo_v2_t", unsafe.Sizeof(cProcessInfoV2{}), 24},
		{"nvmlPciInfo_t.busId offset", unsafe.Offsetof(cPCIInfo{}.BusID), 36},
		{"nvmlProcessInfo_v2_t.gpuInstanceId offset", unsafe.Offsetof(cProcessInfoV2{}.GPUInstanceID), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes in Go, %d in nvml.h", c.name, c.got, c.want)
		}
	}
}

func TestSearchDirs(t *testing.T) {
	env := map[string]string{"ProgramW6432": `C:\Program Files`}
	got := searchDirs(`C:\Windows\system32`, func(k string) string { return env[k] })
	want := []string{`C:\Windows\system32`, `C:\Program Files\NVIDIA Corporation\NVSMI`}
	if !slices.Equal(got, want) {
		t.Errorf("search folders %q, want %q", got, want)
	}
	if got := searchDirs(`C:\Windows\system32`, func(string) string { return "" }); !slices.Equal(got, want[:1]) {
		t.Errorf("without ProgramW6432: %q, want %q", got, want[:1])
	}
}

// TestAbsentDLL: no nvml.dll in any search folder is "library not
// found", as on Linux without libnvidia-ml.so.1.
func TestAbsentDLL(t *testing.T) {
	l := newDLL([]string{t.TempDir(), filepath.Join(t.TempDir(), "missing")})
	if r := l.Init(); r != ErrorLibraryNotFound {
		t.Fatalf("Init without nvml.dll: %v, want ERROR_LIBRARY_NOT_FOUND", r)
	}
	if _, r := l.DeviceGetCount(); r != ErrorUninitialized {
		t.Errorf("DeviceGetCount after a failed Init: %v, want ERROR_UNINITIALIZED", r)
	}
}

// TestDriverNotLoaded: nvml.dll is there but the driver is not.
func TestDriverNotLoaded(t *testing.T) {
	l := newDLL([]string{stubDir(t, "NONE")})
	if r := l.Init(); r != ErrorDriverNotLoaded {
		t.Fatalf("Init: %v, want ERROR_DRIVER_NOT_LOADED", r)
	}
	if l.loaded() {
		t.Error("nvml.dll stays loaded after a failed Init")
	}
	if _, r := l.DeviceGetCount(); r != ErrorUninitialized {
		t.Errorf("DeviceGetCount after a failed Init: %v, want ERROR_UNINITIALIZED", r)
	}
}

// TestOneGPU reads every value of a current driver's nvml.dll, found in
// the second search folder (NVSMI) when the first (System32) lacks it.
func TestOneGPU(t *testing.T) {
	l := newDLL([]string{t.TempDir(), stubDir(t, "GPU")})
	if r := l.Init(); r != Success {
		t.Fatalf("Init: %v", r)
	}
	if v, r := l.SystemGetDriverVersion(); v != "591.44" || r != Success {
		t.Errorf("driver version %q, %v", v, r)
	}
	if v, r := l.SystemGetNVMLVersion(); v != "13.591.44" || r != Success {
		t.Errorf("NVML version %q, %v", v, r)
	}
	if v, r := l.SystemGetCudaDriverVersion_v2(); v != 13010 || r != Success {
		t.Errorf("CUDA version (v2) %d, %v", v, r)
	}
	if n, r := l.DeviceGetCount(); n != 1 || r != Success {
		t.Fatalf("count %d, %v", n, r)
	}
	if _, r := l.DeviceGetHandleByIndex(1); r != ErrorInvalidArgument {
		t.Errorf("GPU 1 of 1: %v, want ERROR_INVALID_ARGUMENT", r)
	}
	d, r := l.DeviceGetHandleByIndex(0)
	if r != Success {
		t.Fatalf("handle: %v", r)
	}
	checkDevice(t, d, "00000000:01:00.0", 0x44)
	if _, _, r := d.GetMigMode(); r != ErrorNotSupported {
		t.Errorf("MIG on a GeForce: %v, want ERROR_NOT_SUPPORTED", r)
	}
	if r := l.Shutdown(); r != Success {
		t.Errorf("Shutdown: %v", r)
	}
	if _, r := l.DeviceGetCount(); r != ErrorUninitialized {
		t.Errorf("after Shutdown: %v, want ERROR_UNINITIALIZED", r)
	}
}

// TestOldDriver: a driver with only the first function names (nvmlInit,
// nvmlProcessInfo_v1_t); what it lacks is ERROR_FUNCTION_NOT_FOUND.
func TestOldDriver(t *testing.T) {
	l := newDLL([]string{stubDir(t, "OLD")})
	if r := l.Init(); r != Success {
		t.Fatalf("Init through nvmlInit: %v", r)
	}
	defer l.Shutdown()
	if _, r := l.SystemGetCudaDriverVersion_v2(); r != ErrorFunctionNotFound {
		t.Errorf("CUDA version v2 on an old driver: %v, want ERROR_FUNCTION_NOT_FOUND", r)
	}
	if v, r := l.SystemGetCudaDriverVersion(); v != 13000 || r != Success {
		t.Errorf("CUDA version %d, %v", v, r)
	}
	d, r := l.DeviceGetHandleByIndex(0)
	if r != Success {
		t.Fatalf("handle through nvmlDeviceGetHandleByIndex: %v", r)
	}
	if _, r := d.GetCurrentClocksEventReasons(); r != ErrorFunctionNotFound {
		t.Errorf("clock event reasons on an old driver: %v", r)
	}
	checkDevice(t, d, "", 0x4)
}

// checkDevice checks the stub GPU's values; busID "" and events 0x4: an
// old driver without nvmlDeviceGetPciInfo_v3 and the event reasons.
func checkDevice(t *testing.T, d Device, busID string, events uint64) {
	t.Helper()
	if v, r := d.GetName(); v != "NVIDIA GeForce RTX 3060" || r != Success {
		t.Errorf("name %q, %v", v, r)
	}
	if v, r := d.GetUUID(); v != "GPU-3c1b2a9d-0000-4e5f-8a7b-112233445566" || r != Success {
		t.Errorf("uuid %q, %v", v, r)
	}
	if v, r := d.GetPCIBusID(); v != busID || (busID != "" && r != Success) || (busID == "" && r != ErrorFunctionNotFound) {
		t.Errorf("PCI bus id %q, %v; want %q", v, r, busID)
	}
	if ma, mi, r := d.GetCudaComputeCapability(); ma != 8 || mi != 6 || r != Success {
		t.Errorf("compute capability %d.%d, %v", ma, mi, r)
	}
	if m, r := d.GetMemoryInfo(); m != (Memory{Total: 12 << 30, Free: 11 << 30, Used: 1 << 30}) || r != Success {
		t.Errorf("memory %+v, %v", m, r)
	}
	if u, r := d.GetUtilizationRates(); u != (Utilization{GPU: 42, Memory: 17}) || r != Success {
		t.Errorf("utilisation %+v, %v", u, r)
	}
	if v, r := d.GetTemperature(); v != 55 || r != Success {
		t.Errorf("temperature %d, %v", v, r)
	}
	if v, r := d.GetPowerUsage(); v != 123456 || r != Success {
		t.Errorf("power %d mW, %v", v, r)
	}
	if v, r := d.GetCurrentClocksThrottleReasons(); v != 0x4 || r != Success {
		t.Errorf("throttle reasons %#x, %v", v, r)
	}
	if events != 0x4 {
		if v, r := d.GetCurrentClocksEventReasons(); v != events || r != Success {
			t.Errorf("clock event reasons %#x, %v", v, r)
		}
	}
	ps, r := d.GetComputeRunningProcesses()
	want := []ProcessInfo{{PID: 4242, UsedGPUMemory: 3 << 30}, {PID: 777, UsedGPUMemory: ValueNotAvailable}}
	if r != Success || !slices.Equal(ps, want) {
		t.Fatalf("processes %+v, %v; want %+v", ps, r, want)
	}
	if ps[0].UsedMiB() != 3072 || ps[1].UsedMiB() != 0 {
		t.Errorf("MiB %d and %d, want 3072 and 0 (not available under WDDM)", ps[0].UsedMiB(), ps[1].UsedMiB())
	}
}
