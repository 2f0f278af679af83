package probe

import (
	"context"
	"gpuwizard/gpu"
	"sort"
	"strings"
)

// windowsSystem reads Windows: the display adapters and the registry
// (through PowerShell and reg.exe), nvidia-smi.exe, CUDA_PATH and the
// toolkits under Program Files, the DLLs PATH reaches, the py launcher's
// Pythons, conda and project venvs, and the Visual C++ runtime. It is
// plain Go on every host: a Linux test judges a Windows fake root.
type windowsSystem struct{ windowsRules }

func (windowsSystem) environ(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[strings.ToUpper(k)] = v
	}
	return out
}

func (windowsSystem) homeVar() string { return "USERPROFILE" }

// envNames are CUDA_PATH_V12_4 and its kind: each toolkit's installer
// sets one, and a stale one names a toolkit that is gone.
func (windowsSystem) envNames(env map[string]string) []string {
	var out []string
	for k := range env {
		if strings.HasPrefix(k, "CUDA_PATH_V") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return append(out, "PATHEXT", "USERPROFILE")
}

func (windowsSystem) sources(p *prober) []source {
	return []source{
		{"pci", p.probeWinAdapters},
		{"host", p.probeWinHost},
		{"nvidia_smi", p.probeNvidiaSMI},
		{"cuda_toolkits", p.probeWinToolkits},
		{"cuda_libraries", p.probeWinLibraries},
		{"python", p.probeWinPythons},
	}
}

func (windowsSystem) pythonCandidates(ctx context.Context, p *prober) ([]candidate, error) {
	return p.winPythonCandidates(ctx)
}

func (windowsSystem) describePython(p *prober, path string) (gpu.PythonEnv, bool) {
	return p.describeWinPython(path)
}

func (windowsSystem) torchCuDNN(p *prober, torchLib string) string {
	for _, f := range p.glob(p.sys.join(torchLib, "cudnn64_*.dll")) {
		if name, v := gpu.DLLLibrary(p.sys.base(f)); name == "libcudnn" && v != "" {
			return v
		}
	}
	return ""
}

// nameProcesses leaves the names empty: Windows has no /proc, and under
// WDDM NVML lists no processes at all (the watcher reads the process
// table).
func (windowsSystem) nameProcesses(*prober, *gpu.Facts) {}

// winEnvDir is a folder named by an environment variable, or def when
// the variable is unset or not an absolute path.
func (p *prober) winEnvDir(name, def string) string {
	if v := p.o.Environ[name]; v != "" && p.sys.isAbs(v) {
		return p.sys.join(v)
	}
	return def
}

// systemRoot is %SystemRoot% (C:\Windows).
func (p *prober) systemRoot() string { return p.winEnvDir("SYSTEMROOT", `C:\Windows`) }

// system32 is %SystemRoot%\System32.
func (p *prober) system32() string { return p.sys.join(p.systemRoot(), "System32") }

// programFiles is the 64-bit Program Files folder (%ProgramW6432% is it
// even for a 32-bit process).
func (p *prober) programFiles() string {
	return p.winEnvDir("PROGRAMW6432", p.winEnvDir("PROGRAMFILES", `C:\Program Files`))
}

// localAppData is %LOCALAPPDATA%, or its place under the home folder.
func (p *prober) localAppData() string {
	def := ""
	if p.o.Home != "" {
		def = p.sys.join(p.o.Home, "AppData", "Local")
	}
	return p.winEnvDir("LOCALAPPDATA", def)
}

// appData is %APPDATA% (the roaming folder, where Python's user site lives).
func (p *prober) appData() string {
	def := ""
	if p.o.Home != "" {
		def = p.sys.join(p.o.Home, "AppData", "Roaming")
	}
	return p.winEnvDir("APPDATA", def)
}

// onPath says whether dir is one of the probed PATH's folders.
func (p *prober) onPath(dir string) bool {
	for _, d := range p.pathDirs() {
		if p.sys.key(d) == p.sys.key(dir) {
			return true
		}
	}
	return false
}

// winFacts is f.Windows, made when missing (sources' apply functions run
// one after the other, so this needs no lock).
func winFacts(f *gpu.Facts) *gpu.WindowsFacts {
	if f.Windows == nil {
		f.Windows = &gpu.WindowsFacts{}
	}
	return f.Windows
}
