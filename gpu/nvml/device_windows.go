package nvml

import "unsafe"

// The C structs NVML fills, laid out as nvml.h declares them for 64-bit
// Windows (the same as 64-bit Linux: natural alignment, explicit padding
// here). The sizes are checked by the tests against a stub nvml.dll
// compiled from nvml.h's declarations.
type (
	// nvmlMemory_t: 24 bytes.
	cMemory struct {
		Total, Free, Used uint64
	}
	// nvmlUtilization_t: 8 bytes.
	cUtilization struct {
		GPU, Memory uint32
	}
	// nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3): 68 bytes.
	cPCIInfo struct {
		BusIDLegacy    [16]byte
		Domain         uint32
		Bus            uint32
		Device         uint32
		PCIDeviceID    uint32
		PCISubSystemID uint32
		BusID          [32]byte
	}
	// nvmlProcessInfo_v1_t (nvmlDeviceGetComputeRunningProcesses): 16 bytes.
	cProcessInfoV1 struct {
		PID           uint32
		_             uint32
		UsedGPUMemory uint64
	}
	// nvmlProcessInfo_v2_t (the _v2 and _v3 functions): 24 bytes.
	cProcessInfoV2 struct {
		PID               uint32
		_                 uint32
		UsedGPUMemory     uint64
		GPUInstanceID     uint32
		ComputeInstanceID uint32
	}
)

// nvmlTemperatureSensors_t's NVML_TEMPERATURE_GPU.
const temperatureGPU = 0

// dllDevice is one nvmlDevice_t of a loaded nvml.dll.
type dllDevice struct {
	l *dllLibrary
	h uintptr
}

func (d dllDevice) GetName() (string, Return) {
	return d.l.text("nvmlDeviceGetName", nameBufferSize, d.h)
}

func (d dllDevice) GetUUID() (string, Return) {
	return d.l.text("nvmlDeviceGetUUID", uuidBufferSize, d.h)
}

func (d dllDevice) GetPCIBusID() (string, Return) {
	var p cPCIInfo
	r := d.l.call(names("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"), d.h, uintptr(unsafe.Pointer(&p)))
	if r != Success {
		return "", r
	}
	return cString(p.BusID[:]), Success
}

func (d dllDevice) GetCudaComputeCapability() (int, int, Return) {
	var ma, mi int32
	r := d.l.call(names("nvmlDeviceGetCudaComputeCapability"), d.h, uintptr(unsafe.Pointer(&ma)), uintptr(unsafe.Pointer(&mi)))
	return int(ma), int(mi), r
}

func (d dllDevice) GetMemoryInfo() (Memory, Return) {
	var m cMemory
	r := d.l.call(names("nvmlDeviceGetMemoryInfo"), d.h, uintptr(unsafe.Pointer(&m)))
	return Memory{Total: m.Total, Free: m.Free, Used: m.Used}, r
}

func (d dllDevice) GetUtilizationRates() (Utilization, Return) {
	var u cUtilization
	r := d.l.call(names("nvmlDeviceGetUtilizationRates"), d.h, uintptr(unsafe.Pointer(&u)))
	return Utilization{GPU: u.GPU, Memory: u.Memory}, r
}

func (d dllDevice) GetTemperature() (uint32, Return) {
	var t uint32
	r := d.l.call(names("nvmlDeviceGetTemperature"), d.h, temperatureGPU, uintptr(unsafe.Pointer(&t)))
	return t, r
}

func (d dllDevice) GetPowerUsage() (uint32, Return) {
	var p uint32
	r := d.l.call(names("nvmlDeviceGetPowerUsage"), d.h, uintptr(unsafe.Pointer(&p)))
	return p, r
}

func (d dllDevice) GetCurrentClocksEventReasons() (uint64, Return) {
	var m uint64
	r := d.l.call(names("nvmlDeviceGetCurrentClocksEventReasons"), d.h, uintptr(unsafe.Pointer(&m)))
	return m, r
}

func (d dllDevice) GetCurrentClocksThrottleReasons() (uint64, Return) {
	var m uint64
	r := d.l.call(names("nvmlDeviceGetCurrentClocksThrottleReasons"), d.h, uintptr(unsafe.Pointer(&m)))
	return m, r
}

func (d dllDevice) GetMigMode() (int, int, Return) {
	var cur, pending uint32
	r := d.l.call(names("nvmlDeviceGetMigMode"), d.h, uintptr(unsafe.Pointer(&cur)), uintptr(unsafe.Pointer(&pending)))
	return int(cur), int(pending), r
}

// GetComputeRunningProcesses uses the newest function the driver has:
// _v3 and _v2 fill nvmlProcessInfo_v2_t, the first one (drivers before
// R470) nvmlProcessInfo_v1_t.
func (d dllDevice) GetComputeRunningProcesses() ([]ProcessInfo, Return) {
	for _, n := range []string{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"} {
		if d.l.proc(n) != 0 {
			return processes(func(count *uint32, buf []cProcessInfoV2) Return {
				return d.l.call(names(n), d.h, uintptr(unsafe.Pointer(count)), uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
			}, func(p cProcessInfoV2) ProcessInfo { return ProcessInfo{PID: p.PID, UsedGPUMemory: p.UsedGPUMemory} })
		}
	}
	return processes(func(count *uint32, buf []cProcessInfoV1) Return {
		return d.l.call(names("nvmlDeviceGetComputeRunningProcesses"), d.h, uintptr(unsafe.Pointer(count)), uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	}, func(p cProcessInfoV1) ProcessInfo { return ProcessInfo{PID: p.PID, UsedGPUMemory: p.UsedGPUMemory} })
}

// processes runs NVML's list protocol: ask with room for some entries; on
// ERROR_INSUFFICIENT_SIZE NVML has written the count it needs, so ask
// again with that much room (processes may start in between: a few tries).
func processes[T any](get func(count *uint32, buf []T) Return, conv func(T) ProcessInfo) ([]ProcessInfo, Return) {
	room := uint32(16)
	for range 4 {
		buf := make([]T, room)
		count := room
		r := get(&count, buf)
		if r == ErrorInsufficientSize && count > room {
			room = count + 8
			continue
		}
		if r != Success {
			return nil, r
		}
		out := make([]ProcessInfo, 0, min(count, room))
		for _, p := range buf[:min(count, room)] {
			out = append(out, conv(p))
		}
		return out, Success
	}
	return nil, ErrorInsufficientSize
}
