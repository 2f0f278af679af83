package gpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// WindowsFacts are what the probe reads only on Windows: the display
// adapters as Windows lists them (which tell "no NVIDIA GPU" from "GPU
// without its driver" where Linux reads PCI), nvidia-smi.exe, the py
// launcher, the Visual C++ runtime torch's DLLs load, and the settings
// pip and the driver depend on. Nil on other systems and in reports.
type WindowsFacts struct {
	// Version is the Windows edition and release ("Windows 11 Pro 23H2"),
	// Build its build number (22631).
	Version string `json:"version,omitempty"`
	Build   int    `json:"build,omitempty"`
	// LongPathsEnabled is the registry's LongPathsEnabled: without it a
	// path longer than 260 characters fails (pip installing torch or
	// TensorFlow into a deep folder). Nil: unknown.
	LongPathsEnabled *bool `json:"long_paths_enabled,omitempty"`
	// Adapters are the display adapters (Win32_VideoController).
	Adapters []DisplayAdapter `json:"display_adapters,omitempty"`
	// NvidiaSMI is the nvidia-smi.exe found (System32 or NVSMI), and
	// NvidiaSMIOnPath whether typing nvidia-smi runs it.
	NvidiaSMI       string `json:"nvidia_smi,omitempty"`
	NvidiaSMIOnPath bool   `json:"nvidia_smi_on_path,omitempty"`
	// PyLauncher is the py.exe found; PythonAlias the Microsoft Store's
	// "App execution alias" python.exe when it is the first python on
	// PATH, and StorePython whether a Store Python is installed behind it
	// (without one, typing python opens the Store).
	PyLauncher  string `json:"py_launcher,omitempty"`
	PythonAlias string `json:"python_alias,omitempty"`
	StorePython bool   `json:"store_python,omitempty"`
	// Runtime are the Visual C++ runtime DLLs and where each was found:
	// System32, and the folders of every Python with torch (its own
	// folder and torch\lib), which Windows searches for torch's DLLs.
	Runtime []RuntimeDLL `json:"vc_runtime,omitempty"`
	// RuntimeGaps are the Pythons with torch that miss a runtime DLL in
	// every folder Windows searches for torch's DLLs' imports.
	RuntimeGaps []RuntimeGap `json:"vc_runtime_gaps,omitempty"`
}

// RuntimeGap is a Python whose torch cannot load for want of these DLLs.
type RuntimeGap struct {
	Interpreter string   `json:"interpreter"`
	Missing     []string `json:"missing"`
	Searched    []string `json:"searched"` // the folders looked in
}

// DisplayAdapter is one display adapter as Windows lists it.
type DisplayAdapter struct {
	Name        string `json:"name"`
	PNPDeviceID string `json:"pnp_device_id,omitempty"` // PCI\VEN_10DE&DEV_2684&...
	// Provider is Win32_VideoController's AdapterCompatibility: "NVIDIA"
	// once NVIDIA's driver drives it, "(Standard display types)" for
	// Microsoft's basic driver.
	Provider string `json:"provider,omitempty"`
	// DriverVersion is Windows' form ("32.0.15.6094"), Driver NVIDIA's
	// (560.94) when the provider is NVIDIA.
	DriverVersion string `json:"driver_version,omitempty"`
	Driver        string `json:"driver,omitempty"`
	Status        string `json:"status,omitempty"`
	// ErrorCode is Device Manager's problem code: 0 works, 28 no driver
	// installed, 43 the device reported a problem and was stopped.
	ErrorCode int `json:"error_code,omitempty"`
}

// VendorDevice reads the PCI vendor and device IDs of the adapter's Plug
// and Play ID ("10de", "2684"); "" when it has none.
func (a DisplayAdapter) VendorDevice() (vendor, device string) {
	m := pnpIDRE.FindStringSubmatch(a.PNPDeviceID)
	if m == nil {
		return "", ""
	}
	return strings.ToLower(m[1]), strings.ToLower(m[2])
}

// IsNVIDIA reports whether the adapter is an NVIDIA device (PCI vendor
// 10de), whatever drives it.
func (a DisplayAdapter) IsNVIDIA() bool {
	v, _ := a.VendorDevice()
	return v == "10de"
}

var pnpIDRE = regexp.MustCompile(`(?i)\bVEN_([0-9a-f]{4})&DEV_([0-9a-f]{4})`)

// RuntimeDLL is one DLL of the Visual C++ runtime and the folders it was
// found in (none: missing there).
type RuntimeDLL struct {
	Name  string   `json:"name"`
	Found []string `json:"found,omitempty"`
}

// Library origins on Windows (Library.Origin): where a DLL was found,
// and whether LoadLibrary's search (PATH, System32) reaches it.
const (
	OriginPATH       = "PATH"
	OriginSystem32   = "System32"
	OriginToolkitOff = "toolkit bin, not on PATH"
	OriginCuDNNOff   = "cuDNN installer folder, not on PATH"
	OriginCondaEnv   = "conda environment (on PATH when it is activated)"
	OriginHeader     = "header"
)

// Reachable says whether LoadLibrary finds a DLL of that origin by its
// name from any program: it lies on PATH or in System32.
func Reachable(origin string) bool { return origin == OriginPATH || origin == OriginSystem32 }

// VCRuntimeDLLs are the Visual C++ 2015-2022 runtime DLLs torch's DLLs
// (c10.dll, torch_python.dll) import; without them Windows refuses to
// load torch (WinError 126, or 1114 with an old copy).
var VCRuntimeDLLs = []string{"vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"}

var winDriverRE = regexp.MustCompile(`^\d+\.\d+\.(\d\d)\.(\d{4})$`)

// WindowsDriverVersion turns Windows' form of an NVIDIA driver version
// (its last two fields are two and four digits) into NVIDIA's: the last
// five digits, a dot before the final two ("32.0.15.6094" → "560.94",
// "31.0.15.7652" → "576.52"). "" when s is not in that form.
func WindowsDriverVersion(s string) string {
	m := winDriverRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ""
	}
	digits := (m[1] + m[2])[1:]
	major, err := strconv.Atoi(digits[:3])
	if err != nil || major < 100 {
		return ""
	}
	return strconv.Itoa(major) + "." + digits[3:]
}

var dllRE = regexp.MustCompile(`^(cudnn|cudart|cublas|nvrtc)64_(\d+)(?:_0)?\.dll$`)

// DLLLibrary names the tracked library a Windows DLL is, as Library.Name
// does on Linux ("cudnn64_9.dll" → "libcudnn", "9"; "cudart64_110.dll" →
// "libcudart", "11.0"; "nvcuda.dll" → "libcuda"; "zlibwapi.dll" →
// "zlibwapi", which cuDNN 8.3 and later need), or "".
func DLLLibrary(file string) (name, version string) {
	low := strings.ToLower(file)
	switch low {
	case "nvcuda.dll":
		return "libcuda", ""
	case "nvml.dll":
		return "libnvidia-ml", ""
	case "zlibwapi.dll":
		return "zlibwapi", ""
	}
	m := dllRE.FindStringSubmatch(low)
	if m == nil {
		return "", ""
	}
	if m[1] == "cudnn" {
		return "libcudnn", m[2]
	}
	return "lib" + m[1], dllCUDAVersion(m[2])
}

// DLLNumberVersion reads a version TensorFlow's Windows builds give as
// their DLLs' numbers ("64_112" → "11.2", "64_8" → "8"); any other
// version comes back unchanged.
func DLLNumberVersion(s string) string {
	if n, ok := strings.CutPrefix(s, "64_"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return dllCUDAVersion(n)
	}
	return s
}

// dllCUDAVersion reads the CUDA version in a DLL's number: "12" (CUDA 12
// and 13 name only the major), "110" is 11.0, "101" is 10.1, "92" is 9.2.
func dllCUDAVersion(n string) string {
	switch {
	case len(n) == 3:
		return n[:2] + "." + n[2:]
	case len(n) == 2 && n >= "11" && n <= "19":
		return n
	case len(n) == 2:
		return n[:1] + "." + n[1:]
	}
	return n
}

// IsWindowsPath reports whether s is an absolute Windows path (a drive
// letter or a UNC share).
func IsWindowsPath(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') ||
		strings.HasPrefix(s, `\\`) && len(s) > 2
}

// PSQuote quotes s as one PowerShell argument when it needs quoting
// (single quotes, which PowerShell does not expand; ' is doubled).
func PSQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`\/:._-+=`, r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// CommandWord is a program path written where a command starts: a
// Windows path for PowerShell (quoted with the call operator & when it
// needs quotes: `& 'C:\Program Files\…\python.exe'`), any other path for
// a POSIX shell (ShellQuote).
func CommandWord(path string) string {
	if !IsWindowsPath(path) {
		return ShellQuote(path)
	}
	if q := PSQuote(path); q != path {
		return "& " + q
	}
	return path
}

// summaryRows are the facts summary's rows of what only Windows has;
// none when w is nil.
func (w *WindowsFacts) summaryRows(gpus []GPU) [][2]string {
	if w == nil {
		return nil
	}
	var rows [][2]string
	add := func(k, v string) { rows = append(rows, [2]string{k, v}) }
	for _, a := range w.Adapters {
		v := a.Name
		if a.DriverVersion != "" {
			v += ", driver " + a.DriverVersion
			if a.Driver != "" {
				v += " (" + a.Driver + ")"
			}
		}
		if a.ErrorCode != 0 {
			v += fmt.Sprintf(", Device Manager code %d", a.ErrorCode)
		}
		add("adapter", v)
	}
	for _, g := range gpus {
		if g.DriverModel != "" {
			v := g.DriverModel
			if g.DriverModelPending != "" && g.DriverModelPending != g.DriverModel {
				v += " (" + g.DriverModelPending + " after a restart)"
			}
			add(fmt.Sprintf("GPU %d model", g.Index), v)
		}
	}
	if w.NvidiaSMI != "" {
		v := w.NvidiaSMI
		if !w.NvidiaSMIOnPath {
			v += " (not on PATH)"
		}
		add("nvidia-smi", v)
	}
	if w.LongPathsEnabled != nil {
		add("long paths", map[bool]string{true: "enabled", false: "disabled (LongPathsEnabled is 0 or absent)"}[*w.LongPathsEnabled])
	}
	var missing, found []string
	for _, r := range w.Runtime {
		if len(r.Found) == 0 {
			missing = append(missing, r.Name)
		} else {
			found = append(found, r.Name)
		}
	}
	if len(missing)+len(found) > 0 {
		v := strings.Join(found, ", ")
		if len(missing) > 0 {
			v = "missing " + strings.Join(missing, ", ") + ifNotEmpty("; found "+v, len(found) > 0)
		}
		add("VC++ runtime", v)
	}
	if w.PyLauncher != "" {
		add("py launcher", w.PyLauncher)
	}
	if w.PythonAlias != "" {
		add("python", w.PythonAlias+" (the Microsoft Store's alias)")
	}
	return rows
}

func ifNotEmpty(s string, ok bool) string {
	if ok {
		return s
	}
	return ""
}
