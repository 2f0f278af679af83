// Package nvml is the part of NVIDIA's management library (NVML) that
// gpuwizard reads: the driver and CUDA versions, the GPUs, their memory,
// use, temperature, power, clock slowdowns, MIG mode and compute
// processes. It is gpuwizard's own small interface, implemented over
// go-nvml on Linux (nvml_linux.go), over nvml.dll without cgo on Windows
// (nvml_windows.go) and by an absent library elsewhere; package nvmlfake
// plays any machine in tests on every platform.
//
// Return codes and struct fields keep NVML's own numbers and meanings
// (nvml.h), so every binding reports the same Return for the same answer.
package nvml

import "strconv"

// Return is an NVML return code (nvmlReturn_t).
type Return int32

// NVML's return codes, as nvml.h numbers them.
const (
	Success                      Return = 0
	ErrorUninitialized           Return = 1
	ErrorInvalidArgument         Return = 2
	ErrorNotSupported            Return = 3
	ErrorNoPermission            Return = 4
	ErrorAlreadyInitialized      Return = 5
	ErrorNotFound                Return = 6
	ErrorInsufficientSize        Return = 7
	ErrorInsufficientPower       Return = 8
	ErrorDriverNotLoaded         Return = 9
	ErrorTimeout                 Return = 10
	ErrorIRQIssue                Return = 11
	ErrorLibraryNotFound         Return = 12
	ErrorFunctionNotFound        Return = 13
	ErrorCorruptedInforom        Return = 14
	ErrorGPUIsLost               Return = 15
	ErrorResetRequired           Return = 16
	ErrorOperatingSystem         Return = 17
	ErrorLibRMVersionMismatch    Return = 18
	ErrorInUse                   Return = 19
	ErrorMemory                  Return = 20
	ErrorNoData                  Return = 21
	ErrorVGPUECCNotSupported     Return = 22
	ErrorInsufficientResources   Return = 23
	ErrorFreqNotSupported        Return = 24
	ErrorArgumentVersionMismatch Return = 25
	ErrorDeprecated              Return = 26
	ErrorNotReady                Return = 27
	ErrorGPUNotFound             Return = 28
	ErrorInvalidState            Return = 29
	ErrorResetTypeNotSupported   Return = 30
	ErrorUnknown                 Return = 999
)

// returnNames are the codes' names as nvml.h spells them, without NVML_.
var returnNames = map[Return]string{
	Success: "SUCCESS", ErrorUninitialized: "ERROR_UNINITIALIZED",
	ErrorInvalidArgument: "ERROR_INVALID_ARGUMENT", ErrorNotSupported: "ERROR_NOT_SUPPORTED",
	ErrorNoPermission: "ERROR_NO_PERMISSION", ErrorAlreadyInitialized: "ERROR_ALREADY_INITIALIZED",
	ErrorNotFound: "ERROR_NOT_FOUND", ErrorInsufficientSize: "ERROR_INSUFFICIENT_SIZE",
	ErrorInsufficientPower: "ERROR_INSUFFICIENT_POWER", ErrorDriverNotLoaded: "ERROR_DRIVER_NOT_LOADED",
	ErrorTimeout: "ERROR_TIMEOUT", ErrorIRQIssue: "ERROR_IRQ_ISSUE",
	ErrorLibraryNotFound: "ERROR_LIBRARY_NOT_FOUND", ErrorFunctionNotFound: "ERROR_FUNCTION_NOT_FOUND",
	ErrorCorruptedInforom: "ERROR_CORRUPTED_INFOROM", ErrorGPUIsLost: "ERROR_GPU_IS_LOST",
	ErrorResetRequired: "ERROR_RESET_REQUIRED", ErrorOperatingSystem: "ERROR_OPERATING_SYSTEM",
	ErrorLibRMVersionMismatch: "ERROR_LIB_RM_VERSION_MISMATCH", ErrorInUse: "ERROR_IN_USE",
	ErrorMemory: "ERROR_MEMORY", ErrorNoData: "ERROR_NO_DATA",
	ErrorVGPUECCNotSupported: "ERROR_VGPU_ECC_NOT_SUPPORTED", ErrorInsufficientResources: "ERROR_INSUFFICIENT_RESOURCES",
	ErrorFreqNotSupported: "ERROR_FREQ_NOT_SUPPORTED", ErrorArgumentVersionMismatch: "ERROR_ARGUMENT_VERSION_MISMATCH",
	ErrorDeprecated: "ERROR_DEPRECATED", ErrorNotReady: "ERROR_NOT_READY",
	ErrorGPUNotFound: "ERROR_GPU_NOT_FOUND", ErrorInvalidState: "ERROR_INVALID_STATE",
	ErrorResetTypeNotSupported: "ERROR_RESET_TYPE_NOT_SUPPORTED", ErrorUnknown: "ERROR_UNKNOWN",
}

// String names the code as nvml.h does ("ERROR_DRIVER_NOT_LOADED"); a
// code this table lacks (a newer driver's) is "ERROR_CODE_n".
func (r Return) String() string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return "ERROR_CODE_" + strconv.Itoa(int(r))
}

// Memory is a GPU's memory in bytes (nvmlMemory_t: total, free, used).
type Memory struct {
	Total, Free, Used uint64
}

// Utilization is the percentage of the last sample period during which a
// kernel ran (GPU) and device memory was read or written (Memory).
type Utilization struct {
	GPU, Memory uint32
}

// ValueNotAvailable is NVML's "not available" (NVML_VALUE_NOT_AVAILABLE,
// -1 as an unsigned value): Windows' WDDM driver model reports it as every
// process's memory, because Windows, not the NVIDIA driver, manages it.
const ValueNotAvailable = ^uint64(0)

// ProcessInfo is one compute process on a GPU.
type ProcessInfo struct {
	PID           uint32
	UsedGPUMemory uint64 // bytes; ValueNotAvailable under WDDM
}

// UsedMiB is the process's GPU memory in MiB, 0 when NVML does not know it.
func (p ProcessInfo) UsedMiB() uint64 {
	if p.UsedGPUMemory == ValueNotAvailable {
		return 0
	}
	return p.UsedGPUMemory >> 20
}

// MIG modes (NVML_DEVICE_MIG_DISABLE, NVML_DEVICE_MIG_ENABLE).
const (
	MIGDisable = 0
	MIGEnable  = 1
)

// Library is NVML as gpuwizard uses it. Init must succeed before any other
// call; Shutdown ends what Init started. A method may panic where a
// binding lacks it (a test double without the method): callers recover.
type Library interface {
	Init() Return
	Shutdown() Return
	SystemGetDriverVersion() (string, Return)
	SystemGetNVMLVersion() (string, Return)
	// SystemGetCudaDriverVersion_v2 and SystemGetCudaDriverVersion give the
	// CUDA version the driver supports as 1000*major + 10*minor.
	SystemGetCudaDriverVersion_v2() (int, Return)
	SystemGetCudaDriverVersion() (int, Return)
	DeviceGetCount() (int, Return)
	DeviceGetHandleByIndex(i int) (Device, Return)
}

// Device is one GPU as NVML sees it.
type Device interface {
	GetName() (string, Return)
	GetUUID() (string, Return)
	// GetPCIBusID is the PCI address, "00000000:01:00.0".
	GetPCIBusID() (string, Return)
	GetCudaComputeCapability() (major, minor int, r Return)
	GetMemoryInfo() (Memory, Return)
	GetUtilizationRates() (Utilization, Return)
	// GetTemperature is the GPU core's temperature in °C.
	GetTemperature() (uint32, Return)
	// GetPowerUsage is the board's power draw in milliwatts.
	GetPowerUsage() (uint32, Return)
	// GetCurrentClocksEventReasons (drivers from 535) and its older name
	// GetCurrentClocksThrottleReasons give the mask of clock slowdowns.
	GetCurrentClocksEventReasons() (uint64, Return)
	GetCurrentClocksThrottleReasons() (uint64, Return)
	GetMigMode() (current, pending int, r Return)
	GetComputeRunningProcesses() ([]ProcessInfo, Return)
}

// cString is the text of a NUL-terminated C char array.
func cString[T ~int8 | ~uint8](b []T) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	out := make([]byte, n)
	for i := range n {
		out[i] = byte(b[i])
	}
	return string(out)
}
