package probe_test

import (
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"
)

// workstation is the fake Windows workstation's NVML: one RTX 4090 on
// driver 560.94 (CUDA 12.6).
func workstation(t *testing.T) *fakemachine.Machine {
	return fakemachine.WindowsMachine(t, fakemachine.MockNVML("560.94", 12060, fakemachine.RTX4090()))
}

// The probe reads a Windows machine's fake root from any host, with
// Windows' rules: drive letters and backslashes, PATH split on ';',
// commands by PATHEXT, names without case (SystemRoot is C:\WINDOWS,
// the folder C:\Windows; the environment says Path, not PATH).
func TestWindowsWorkstation(t *testing.T) {
	f := workstation(t).Probe(t)
	for _, s := range f.Sources {
		if !s.OK {
			t.Errorf("source %s did not answer: %s", s.Name, s.Error)
		}
	}
	w := f.Windows
	if f.Host.OS != "windows" || w == nil {
		t.Fatalf("host %+v, windows facts %+v", f.Host, w)
	}
	if f.Host.Hostname != "ADA-RTX4090" {
		t.Errorf("host name %q, want COMPUTERNAME's", f.Host.Hostname)
	}
	if f.Host.DistroName != "Windows 11 Pro 23H2" || w.Build != 22631 || w.LongPathsEnabled == nil || !*w.LongPathsEnabled {
		t.Errorf("release %q build %d long paths %v", f.Host.DistroName, w.Build, w.LongPathsEnabled)
	}
	if len(w.Adapters) != 2 || w.Adapters[0].Driver != "560.94" || w.Adapters[0].DriverVersion != "32.0.15.6094" {
		t.Errorf("adapters %+v", w.Adapters)
	}
	if len(f.PCI) != 1 || f.PCI[0].Device != "0x2684" || f.PCI[0].Driver != "nvlddmkm" || !f.PCI[0].IsGPU() {
		t.Errorf("NVIDIA devices %+v", f.PCI)
	}
	if !strings.EqualFold(w.NvidiaSMI, `C:\Windows\System32\nvidia-smi.exe`) || !w.NvidiaSMIOnPath {
		t.Errorf("nvidia-smi %q on PATH %v", w.NvidiaSMI, w.NvidiaSMIOnPath)
	}
	if g := f.NVML.GPUs; len(g) != 1 || g[0].DriverModel != "WDDM" || g[0].DriverModelPending != "WDDM" {
		t.Errorf("GPUs %+v", g)
	}
	if k := f.CUDA.Toolkits; len(k) != 1 || k[0].Version != "12.4.1" || !k[0].OnPath ||
		k[0].Path != `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4` {
		t.Errorf("toolkits %+v", k)
	}
	if !strings.EqualFold(w.PyLauncher, `C:\Windows\py.exe`) || w.PythonAlias != "" {
		t.Errorf("py launcher %q, python alias %q", w.PyLauncher, w.PythonAlias)
	}
	for _, r := range w.Runtime {
		if len(r.Found) == 0 || !strings.EqualFold(r.Found[0], `C:\Windows\System32`) {
			t.Errorf("%s found in %v", r.Name, r.Found)
		}
	}
	if ev, ok := f.EnvVar("CUDA_PATH_V12_4"); !ok || !strings.HasSuffix(ev.Value, `\v12.4`) {
		t.Errorf("CUDA_PATH_V12_4 = %+v", ev)
	}
	if ev, ok := f.EnvVar("PATH"); !ok || !strings.Contains(ev.Value, `.venv\Scripts`) {
		t.Errorf("the environment's Path is not PATH: %+v", ev)
	}
}

// cuDNN 9's installer puts its DLLs in bin\<cuda> subfolders, which the
// PATH entry it adds (bin) does not reach: they are listed, marked so.
func TestWindowsLibraries(t *testing.T) {
	f := workstation(t).Probe(t)
	got := map[string]gpu.Library{}
	for _, l := range f.CUDA.Libraries {
		got[l.Soname] = l
	}
	want := map[string]struct{ name, version, origin, path string }{
		"cudnn64_9.dll":     {"libcudnn", "9", gpu.OriginCuDNNOff, `C:\Program Files\NVIDIA\CUDNN\v9.5\bin\12.6\cudnn64_9.dll`},
		"cudnn_version.h":   {"libcudnn", "9.5.1", gpu.OriginHeader, `C:\Program Files\NVIDIA\CUDNN\v9.5\include\12.6\cudnn_version.h`},
		"cudart64_12.dll":   {"libcudart", "12", gpu.OriginPATH, `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin\cudart64_12.dll`},
		"nvrtc64_120_0.dll": {"libnvrtc", "12.0", gpu.OriginPATH, `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin\nvrtc64_120_0.dll`},
		"nvcuda.dll":        {"libcuda", "", gpu.OriginPATH, `C:\WINDOWS\system32\nvcuda.dll`},
	}
	for so, w := range want {
		l := got[so]
		if l.Name != w.name || l.Version != w.version || l.Origin != w.origin || l.Path != w.path {
			t.Errorf("%s: got %+v, want %+v", so, l, w)
		}
	}
}

// The Pythons of a Windows user: the activated venv that `python` runs,
// python.org's installs through the py launcher (py -3.12 and py for
// the default), and Miniconda's base on disk; torch's build and its
// bundled cuDNN (torch\lib\cudnn64_9.dll) read statically.
func TestWindowsPythons(t *testing.T) {
	f := workstation(t).Probe(t)
	byPrefix := map[string]gpu.PythonEnv{}
	for _, e := range f.Pythons {
		byPrefix[e.Prefix] = e
	}
	venv := byPrefix[fakemachine.WindowsVenv]
	if venv.Kind != "venv" || venv.Version != "3.12" || !gpu.Contains(venv.Commands, "python") ||
		venv.Interpreter != fakemachine.WindowsVenv+`\Scripts\python.exe` || len(venv.SitePackages) != 1 || venv.SitePackages[0] != fakemachine.WindowsSite {
		t.Errorf("venv %+v", venv)
	}
	torch, ok := venv.Package("torch")
	if !ok || torch.Version != "2.5.1+cu124" || torch.CUDA != "12.4" || torch.CuDNN != "9" || torch.CPUOnly || torch.Location != fakemachine.WindowsSite {
		t.Errorf("torch %+v", torch)
	}
	py312 := byPrefix[fakemachine.WindowsPython]
	if py312.Kind != "other" || py312.Version != "3.12" || !gpu.Contains(py312.Commands, "py -3.12") || !gpu.Contains(py312.Commands, "py") ||
		!gpu.Contains(py312.FoundVia, "py launcher (-V:3.12)") {
		t.Errorf("python.org 3.12 %+v", py312)
	}
	py311 := byPrefix[`C:\Users\ada\AppData\Local\Programs\Python\Python311`]
	if py311.Version != "3.11" || !gpu.Contains(py311.Commands, "py -3.11") || gpu.Contains(py311.Commands, "py") {
		t.Errorf("python.org 3.11 %+v", py311)
	}
	if conda := byPrefix[`C:\Users\ada\miniconda3`]; conda.Kind != "conda" || conda.Version != "3.12" {
		t.Errorf("miniconda %+v", conda)
	}
	if len(f.Pythons) != 4 {
		t.Errorf("%d Pythons, want 4: %+v", len(f.Pythons), f.Pythons)
	}
}

// Without a Python on PATH, `python` is the Microsoft Store's alias (an
// empty stand-in that opens the Store): noted, never read as a Python.
// A conda environment's own Python, and a venv under the home folder,
// are found on disk; the VC++ runtime missing from System32 is seen
// missing where torch would load it.
func TestWindowsStoreAliasAndConda(t *testing.T) {
	m := workstation(t)
	m.Env["Path"] = `C:\WINDOWS\system32;C:\WINDOWS;C:\Users\ada\AppData\Local\Microsoft\WindowsApps`
	delete(m.Env, "VIRTUAL_ENV")
	m.Cwd = fakemachine.WindowsHome
	delete(m.Files, `C:\Windows\System32\msvcp140.dll`)
	env := `C:\Users\ada\miniconda3\envs\yolo`
	m.Files[env+`\python.exe`] = ""
	m.Files[env+`\python311.dll`] = ""
	m.Files[env+`\conda-meta\history`] = ""
	m.Files[env+`\Lib\site-packages\torch-2.5.1.dist-info\METADATA`] = "Name: torch\n"
	m.Files[env+`\Lib\site-packages\torch\version.py`] = "__version__ = '2.5.1'\ncuda = None\nhip = None\n"
	f := m.Probe(t)
	w := f.Windows
	if !strings.EqualFold(w.PythonAlias, `C:\Users\ada\AppData\Local\Microsoft\WindowsApps\python.exe`) || w.StorePython {
		t.Errorf("alias %q, store python %v", w.PythonAlias, w.StorePython)
	}
	var yolo gpu.PythonEnv
	for _, e := range f.Pythons {
		if strings.Contains(e.Interpreter, "WindowsApps") {
			t.Errorf("the Store alias was read as a Python: %+v", e)
		}
		if e.Prefix == env {
			yolo = e
		}
	}
	if pk, ok := yolo.Package("torch"); yolo.Kind != "conda" || yolo.Version != "3.11" || !ok || !pk.CPUOnly {
		t.Errorf("conda env %+v", yolo)
	}
	if g := w.RuntimeGaps; len(g) != 1 || g[0].Interpreter != env+`\python.exe` || len(g[0].Missing) != 1 || g[0].Missing[0] != "msvcp140.dll" {
		t.Errorf("runtime gaps %+v", g)
	}
	for _, r := range w.Runtime {
		switch {
		case r.Name == "msvcp140.dll" && len(r.Found) != 0:
			t.Errorf("msvcp140.dll found in %v; the test removed it", r.Found)
		case r.Name != "msvcp140.dll" && len(r.Found) == 0:
			t.Errorf("%s not found", r.Name)
		}
	}
}

func TestParsePyList(t *testing.T) {
	newer := " -V:3.12 *        C:\\Users\\ada\\AppData\\Local\\Programs\\Python\\Python312\\python.exe\r\n" +
		" -V:3.11          C:\\Python311\\python.exe\r\n" +
		" -V:ContinuumAnalytics/Anaconda39-64 C:\\Users\\ada\\anaconda3\\python.exe\r\n" +
		"  *               Active venv\r\n"
	got := probe.ParsePyList(newer)
	want := []probe.PyEntry{
		{Tag: "-V:3.12", Path: `C:\Users\ada\AppData\Local\Programs\Python\Python312\python.exe`, Default: true},
		{Tag: "-V:3.11", Path: `C:\Python311\python.exe`},
		{Tag: "-V:ContinuumAnalytics/Anaconda39-64", Path: `C:\Users\ada\anaconda3\python.exe`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if c := got[0].Command(); c != "py -3.12" {
		t.Errorf("command %q", c)
	}
	if c := got[2].Command(); c != "py -V:ContinuumAnalytics/Anaconda39-64" {
		t.Errorf("command %q", c)
	}
	older := "Installed Pythons found by py Launcher for Windows\n -3.9-64        C:\\Python39\\python.exe *\n -3.8-32        \\\\srv\\py\\Python38\\python.exe\n"
	got = probe.ParsePyList(older)
	if len(got) != 2 || !got[0].Default || got[0].Path != `C:\Python39\python.exe` || got[0].Command() != "py -3.9-64" ||
		got[1].Default || got[1].Path != `\\srv\py\Python38\python.exe` {
		t.Errorf("older launcher: %+v", got)
	}
}

func TestParseVideoControllers(t *testing.T) {
	out := "\xef\xbb\xbf\"Name\",\"PNPDeviceID\",\"AdapterCompatibility\",\"DriverVersion\",\"Status\",\"ConfigManagerErrorCode\"\r\n" +
		"\"NVIDIA GeForce RTX 3060\",\"PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&1\",\"NVIDIA\",\"31.0.15.3623\",\"Error\",\"43\"\r\n" +
		"\"Microsoft Basic Display Adapter\",\"PCI\\VEN_10DE&DEV_1C82&SUBSYS_00000000&REV_A1\\4&2\",\"(Standard display types)\",\"10.0.22621.1\",\"OK\",\"0\"\r\n"
	a, err := probe.ParseVideoControllers([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || a[0].Driver != "536.23" || a[0].ErrorCode != 43 || !a[0].IsNVIDIA() || !a[1].IsNVIDIA() || a[1].Driver != "" {
		t.Errorf("%+v", a)
	}
	if _, err := probe.ParseVideoControllers([]byte("Get-CimInstance : Access denied\r\n")); err == nil {
		t.Error("an error text is not a list of adapters")
	}
}

func TestParseRegQuery(t *testing.T) {
	out := "\r\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\FileSystem\r\n    LongPathsEnabled    REG_DWORD    0x0\r\n    NtfsDisable8dot3NameCreation    REG_DWORD    0x2\r\n\r\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\FileSystem\\Sub\r\n    Other    REG_SZ    x\r\n"
	v := probe.ParseRegQuery(out)
	if v["LongPathsEnabled"] != "0x0" || v["NtfsDisable8dot3NameCreation"] != "0x2" || len(v) != 2 {
		t.Errorf("%v", v)
	}
}

// The launcher lists the active venv without a tag; `py` runs it.
func TestParsePyListActiveVenv(t *testing.T) {
	got := probe.ParsePyList("  *               C:\\work\\.venv\\Scripts\\python.exe\n -V:3.12          C:\\Python312\\python.exe\n")
	if len(got) != 2 || got[0].Tag != "" || !got[0].Default || got[0].Command() != "py" || got[1].Command() != "py -3.12" {
		t.Errorf("%+v", got)
	}
}

// LongPathsEnabled absent from the registry (reg.exe fails with "unable
// to find") is long paths off, not unknown.
func TestWindowsLongPathsAbsent(t *testing.T) {
	m := workstation(t)
	m.Run[`C:\Windows\System32\reg.exe query HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled`] =
		"error: ERROR: The system was unable to find the specified registry key or value."
	f := m.Probe(t)
	if lp := f.Windows.LongPathsEnabled; lp == nil || *lp {
		t.Errorf("long paths %v, want off", lp)
	}
	if st, _ := f.Source("host"); !st.OK {
		t.Errorf("host source: %+v", st)
	}
}

// Interpreter without a GOOS reads a path with the rules of the system its
// form names: the watcher describes a Linux process's python the same on
// any host, and a Windows one with Windows' rules.
func TestInterpreterRulesFromPath(t *testing.T) {
	m := workstation(t)
	root := m.Build(t)
	opts := m.Options(root, 0)
	opts.GOOS = ""
	env, ok := probe.Interpreter(opts, fakemachine.WindowsVenv+`\Scripts\python.exe`)
	if pk, has := env.Package("torch"); !ok || env.Kind != "venv" || !has || pk.CUDA != "12.4" {
		t.Errorf("Windows venv: ok %v, %+v", ok, env)
	}
	lin := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
	lroot := lin.Build(t)
	env, ok = probe.Interpreter(probe.Options{Root: lroot, Environ: map[string]string{}, Home: "/home/ada"}, "/home/ada/project/.venv/bin/python")
	if pk, has := env.Package("torch"); !ok || env.Kind != "venv" || env.Prefix != "/home/ada/project/.venv" || !has || pk.CUDA != "13.0" {
		t.Errorf("Linux venv: ok %v, %+v", ok, env)
	}
}
