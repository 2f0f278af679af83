package nvml

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// New returns the machine's NVML: nvml.dll, looked for in System32 (where
// drivers from R418 put it) and then in %ProgramW6432%\NVIDIA
// Corporation\NVSMI (older drivers), loaded by Init. No cgo: every call
// goes through the DLL's exported functions.
func New() Library {
	sys, _ := windows.GetSystemDirectory()
	return newDLL(searchDirs(sys, os.Getenv))
}

// searchDirs lists the folders that may hold nvml.dll, in order. Only
// these are searched, by full path: never the current folder or PATH,
// where another nvml.dll could be planted.
func searchDirs(system32 string, getenv func(string) string) []string {
	var dirs []string
	if system32 != "" {
		dirs = append(dirs, system32)
	}
	if pf := getenv("ProgramW6432"); pf != "" {
		dirs = append(dirs, filepath.Join(pf, "NVIDIA Corporation", "NVSMI"))
	}
	return dirs
}

// dllLibrary is NVML over nvml.dll.
type dllLibrary struct {
	dirs []string
	mu   sync.Mutex
	h    windows.Handle // 0 until Init loads the DLL
	path string         // where it was loaded from
	n    int            // Init calls not yet shut down
}

func newDLL(dirs []string) *dllLibrary { return &dllLibrary{dirs: dirs} }

// load opens the first nvml.dll of the search folders; the flag makes the
// DLL's own dependencies resolve from its folder.
func (l *dllLibrary) load() Return {
	for _, d := range l.dirs {
		p := filepath.Join(d, "nvml.dll")
		h, err := windows.LoadLibraryEx(p, 0, windows.LOAD_WITH_ALTERED_SEARCH_PATH)
		if err == nil {
			l.h, l.path = h, p
			return Success
		}
	}
	return ErrorLibraryNotFound
}

// proc finds an exported function; 0 when the DLL lacks it (an older
// driver) or is not loaded.
func (l *dllLibrary) proc(name string) uintptr {
	l.mu.Lock()
	h := l.h
	l.mu.Unlock()
	if h == 0 {
		return 0
	}
	p, err := windows.GetProcAddress(h, name)
	if err != nil {
		return 0
	}
	return p
}

// call calls the first of names the DLL exports; ErrorFunctionNotFound
// when it has none of them, ErrorUninitialized before Init. Pointers
// passed as uintptr stay valid for the call (uintptrescapes).
//
//go:uintptrescapes
func (l *dllLibrary) call(names []string, args ...uintptr) Return {
	for _, n := range names {
		if p := l.proc(n); p != 0 {
			r, _, _ := syscall.SyscallN(p, args...)
			return Return(int32(r))
		}
	}
	if l.loaded() {
		return ErrorFunctionNotFound
	}
	return ErrorUninitialized
}

func (l *dllLibrary) loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h != 0
}

func names(n ...string) []string { return n }

// Init loads nvml.dll when it is not loaded yet and starts NVML
// (nvmlInit_v2; nvmlInit on drivers older than R319).
func (l *dllLibrary) Init() Return {
	l.mu.Lock()
	if l.h == 0 {
		if r := l.load(); r != Success {
			l.mu.Unlock()
			return r
		}
	}
	l.mu.Unlock()
	r := l.call(names("nvmlInit_v2", "nvmlInit"))
	l.mu.Lock()
	defer l.mu.Unlock()
	if r == Success {
		l.n++
	} else if l.n == 0 {
		l.unload()
	}
	return r
}

// Shutdown stops NVML and, after the last Init's Shutdown, unloads the DLL.
func (l *dllLibrary) Shutdown() Return {
	r := l.call(names("nvmlShutdown"))
	l.mu.Lock()
	defer l.mu.Unlock()
	if r == Success && l.n > 0 {
		l.n--
		if l.n == 0 {
			l.unload()
		}
	}
	return r
}

// unload frees the DLL; l.mu is held.
func (l *dllLibrary) unload() {
	if l.h != 0 {
		_ = windows.FreeLibrary(l.h)
		l.h, l.path = 0, ""
	}
}

// NVML's buffer sizes (nvml.h): names, UUIDs and version strings.
const (
	nameBufferSize    = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	uuidBufferSize    = 80 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
	versionBufferSize = 80 // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE
)

// text calls a getter of the form f([device,] char *buf, unsigned len).
func (l *dllLibrary) text(name string, size int, device ...uintptr) (string, Return) {
	buf := make([]byte, size)
	var r Return
	if len(device) == 0 {
		r = l.call(names(name), uintptr(unsafe.Pointer(&buf[0])), uintptr(size))
	} else {
		r = l.call(names(name), device[0], uintptr(unsafe.Pointer(&buf[0])), uintptr(size))
	}
	if r != Success {
		return "", r
	}
	return cString(buf), Success
}

func (l *dllLibrary) SystemGetDriverVersion() (string, Return) {
	return l.text("nvmlSystemGetDriverVersion", versionBufferSize)
}

func (l *dllLibrary) SystemGetNVMLVersion() (string, Return) {
	return l.text("nvmlSystemGetNVMLVersion", versionBufferSize)
}

func (l *dllLibrary) SystemGetCudaDriverVersion_v2() (int, Return) {
	var v int32
	r := l.call(names("nvmlSystemGetCudaDriverVersion_v2"), uintptr(unsafe.Pointer(&v)))
	return int(v), r
}

func (l *dllLibrary) SystemGetCudaDriverVersion() (int, Return) {
	var v int32
	r := l.call(names("nvmlSystemGetCudaDriverVersion"), uintptr(unsafe.Pointer(&v)))
	return int(v), r
}

func (l *dllLibrary) DeviceGetCount() (int, Return) {
	var n uint32
	r := l.call(names("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"), uintptr(unsafe.Pointer(&n)))
	return int(n), r
}

func (l *dllLibrary) DeviceGetHandleByIndex(i int) (Device, Return) {
	if i < 0 {
		return nil, ErrorInvalidArgument
	}
	var h uintptr
	r := l.call(names("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"), uintptr(i), uintptr(unsafe.Pointer(&h)))
	if r != Success {
		return nil, r
	}
	return dllDevice{l: l, h: h}, Success
}
