package doctor

import (
	"fmt"
	"sort"
	"strings"

	"gpuwizard/gpu"
)

// The Windows rules judge what only a Windows machine has, from the
// facts the probe read there (Facts.Windows); every fix is a command a
// Windows user pastes into PowerShell (Windows PowerShell 5.1 has no
// &&: commands are joined with ;). Sources are in the catalog's Windows
// block (signatures.yaml, "Batch W").

// ruleWindows runs the Windows rules; a machine read elsewhere, or a
// pasted report, has no Windows facts and none runs.
func (j *judge) ruleWindows() {
	w := j.f.Windows
	if w == nil {
		return
	}
	j.judgeVCRuntime(w)
	j.judgeCuDNNOffPath()
	j.judgeZlibWAPI()
	j.judgeCUDAPathWindows()
	j.judgeNvidiaSMIPath(w)
	j.judgeDriverModels()
	j.judgeLongPaths(w)
	j.judgePythonAlias(w)
}

// psUserPathAdd appends dir to the user's PATH for new terminals (the
// current one keeps its PATH).
func psUserPathAdd(dir string) string {
	return "[Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ';" +
		strings.ReplaceAll(dir, "'", "''") + "', 'User')"
}

// psUserPathFirst puts dirs before the rest of the user's PATH for new
// terminals (ahead of the Store's alias folder, which is there).
func psUserPathFirst(dirs ...string) string {
	return "[Environment]::SetEnvironmentVariable('Path', '" + strings.ReplaceAll(strings.Join(dirs, ";"), "'", "''") +
		";' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
}

// psUserEnvSet sets a variable for the user's new terminals.
func psUserEnvSet(name, value string) string {
	v := "$null"
	if value != "" {
		v = "'" + strings.ReplaceAll(value, "'", "''") + "'"
	}
	return fmt.Sprintf("[Environment]::SetEnvironmentVariable('%s', %s, 'User')", name, v)
}

// judgeVCRuntime: torch's DLLs (c10.dll, torch_python.dll) import the
// Visual C++ runtime; without it `import torch` fails with WinError 126
// ("Error loading ...\torch\lib\c10.dll or one of its dependencies").
func (j *judge) judgeVCRuntime(w *gpu.WindowsFacts) {
	for _, g := range w.RuntimeGaps {
		inUse := false
		for _, e := range j.f.Pythons {
			if e.Interpreter == g.Interpreter {
				inUse = len(e.Commands) > 0
			}
		}
		j.add(gpu.Finding{ID: "vc_runtime_missing", Cause: gpu.CauseOther, Severity: sevInUse(inUse),
			Title: fmt.Sprintf("torch cannot load in %s: the Microsoft Visual C++ runtime is missing (%s)", g.Interpreter, strings.Join(g.Missing, ", ")),
			Evidence: []string{"not in any folder Windows searches for torch's DLLs: " + strings.Join(g.Searched, "; "),
				`torch's c10.dll imports them: import torch fails with "[WinError 126] ... Error loading ...\torch\lib\c10.dll or one of its dependencies"`},
			Fix: vcRedistFix()})
	}
}

// vcRedistFix installs Microsoft's Visual C++ 2015-2022 redistributable.
func vcRedistFix() []gpu.Step {
	return []gpu.Step{
		{Text: "Install Microsoft's Visual C++ 2015-2022 Redistributable (x64), then open a new terminal:", Command: "winget install --id Microsoft.VCRedist.2015+.x64 --exact"},
		{Text: "Without winget, download Microsoft's installer and run it:", Command: `Invoke-WebRequest https://aka.ms/vs/17/release/vc_redist.x64.exe -OutFile "$env:TEMP\vc_redist.x64.exe"; Start-Process "$env:TEMP\vc_redist.x64.exe" -ArgumentList '/install', '/passive', '/norestart' -Wait`}}
}

// pathLoaders are the packages that load cuDNN and the CUDA DLLs by name
// from PATH (LoadLibrary), unlike torch, whose wheel brings its own.
var pathLoaders = []string{"tensorflow", "tensorflow-gpu", "onnxruntime-gpu", "paddlepaddle-gpu", "cupy"}

// pathLoader is the first environment with a package that loads cuDNN
// of that major from PATH ("" when none); a build that names its cuDNN
// must name this major.
func (j *judge) pathLoader(major int) string {
	for _, e := range j.f.Pythons {
		for _, n := range pathLoaders {
			if pk, ok := e.Package(n); ok && !pk.CPUOnly && (pk.CuDNN == "" || gpu.MustVersion(pk.CuDNN).Major() == major) {
				return fmt.Sprintf("%s %s in %s", pk.Name, pk.Version, e.Interpreter)
			}
		}
	}
	return ""
}

// judgeCuDNNOffPath: cuDNN 9's installer puts its DLLs in bin\<cuda>
// subfolders (bin\12.6\cudnn64_9.dll) and adds only bin to PATH, which
// LoadLibrary does not search below: programs that load cuDNN from PATH
// do not find it.
func (j *judge) judgeCuDNNOffPath() {
	reach := map[int]bool{}
	off := map[int][]gpu.Library{}
	for _, l := range j.f.CUDA.Libraries {
		if l.Name != "libcudnn" || l.Origin == gpu.OriginHeader {
			continue
		}
		major := gpu.MustVersion(l.Version).Major()
		switch {
		case gpu.Reachable(l.Origin):
			reach[major] = true
		case l.Origin == gpu.OriginCuDNNOff:
			off[major] = append(off[major], l)
		}
	}
	for major, libs := range off {
		if reach[major] {
			continue
		}
		pick := j.pickCuDNNDir(libs)
		sev, why := gpu.SevInfo, "torch brings its own cuDNN and does not need it; TensorFlow 2.10, ONNX Runtime, PaddlePaddle and CTranslate2 load it from PATH"
		if user := j.pathLoader(major); user != "" {
			sev, why = gpu.SevWarning, user+" loads cuDNN from PATH"
		}
		var ev []string
		for _, l := range libs {
			ev = append(ev, l.Path+" (not on PATH)")
		}
		j.add(gpu.Finding{ID: "cudnn_not_on_path_windows", Cause: gpu.CauseCudnnProblem, Severity: sev,
			Title:    fmt.Sprintf("cuDNN %d is installed in a folder PATH does not reach", major),
			Evidence: append(ev, "cuDNN 9's installer adds its bin folder to PATH, but the DLLs lie in bin\\<CUDA version> below it", why),
			Fix: []gpu.Step{{Text: "Add the folder for your CUDA version to your PATH, then open a new terminal:", Command: psUserPathAdd(pick)},
				{Text: "Check that Windows finds it:", Command: "where.exe cudnn64_" + fmt.Sprint(major) + ".dll"}}})
	}
}

// pickCuDNNDir is the cuDNN folder to put on PATH: the one for the CUDA
// major of the newest toolkit, else for the newest CUDA the driver runs,
// else the newest.
func (j *judge) pickCuDNNDir(libs []gpu.Library) string {
	dirs := make([]string, 0, len(libs))
	for _, l := range libs {
		dirs = append(dirs, winDir(l.Path))
	}
	sort.Slice(dirs, func(a, b int) bool {
		return gpu.MustVersion(winBase(dirs[a])).Compare(gpu.MustVersion(winBase(dirs[b]))) < 0
	})
	want := j.driverCUDA()
	for _, t := range j.f.CUDA.Toolkits {
		if t.OnPath && t.Version != "" {
			want = t.Version
		}
	}
	wantMajor := gpu.MustVersion(want).Major()
	for i := len(dirs) - 1; i >= 0; i-- {
		v := gpu.MustVersion(winBase(dirs[i]))
		if v.Major() == wantMajor && (j.driverCUDA() == "" || v.Compare(gpu.MustVersion(j.driverCUDA())) <= 0) {
			return dirs[i]
		}
	}
	return dirs[len(dirs)-1]
}

// winDir and winBase split a Windows path at its last backslash.
func winDir(p string) string {
	if i := strings.LastIndex(p, `\`); i > 0 {
		return p[:i]
	}
	return p
}

func winBase(p string) string { return p[strings.LastIndex(p, `\`)+1:] }

// judgeZlibWAPI: cuDNN 8.3 and later 8.x on Windows need zlibwapi.dll,
// which Windows lacks ("Could not locate zlibwapi.dll").
func (j *judge) judgeZlibWAPI() {
	var cudnn8 []string
	zlib := false
	header := ""
	for _, l := range j.f.CUDA.Libraries {
		switch {
		case l.Name == "zlibwapi" && gpu.Reachable(l.Origin):
			zlib = true
		case l.Name == "libcudnn" && l.Origin == gpu.OriginHeader && gpu.MustVersion(l.Version).Major() == 8:
			header = l.Version
		case l.Name == "libcudnn" && gpu.Reachable(l.Origin) && l.Version == "8":
			cudnn8 = append(cudnn8, l.Path)
		}
	}
	if zlib || len(cudnn8) == 0 || header != "" && !gpu.VersionAtLeast(header, "8.3") {
		return
	}
	title := "cuDNN 8 is on PATH without zlibwapi.dll, which cuDNN 8.3 and later need on Windows"
	ev := append(cudnn8, "no zlibwapi.dll on PATH or in System32")
	if header != "" {
		title = fmt.Sprintf("cuDNN %s needs zlibwapi.dll, which is not on PATH", header)
		ev = append(ev, "cudnn_version.h: cuDNN "+header)
	}
	dir := winDir(cudnn8[0])
	j.add(gpu.Finding{ID: "cudnn_zlibwapi_missing", Cause: gpu.CauseCudnnProblem, Severity: gpu.SevWarning,
		Title: title, Evidence: ev,
		Fix: []gpu.Step{{Text: "Download zlib's DLL (the build NVIDIA's cuDNN 8 guide links) and copy zlibwapi.dll beside cuDNN, in a PowerShell run as administrator:",
			Command: `Invoke-WebRequest http://www.winimage.com/zLibDll/zlib123dllx64.zip -OutFile "$env:TEMP\zlib123dllx64.zip"; Expand-Archive "$env:TEMP\zlib123dllx64.zip" "$env:TEMP\zlib123dllx64" -Force; Copy-Item "$env:TEMP\zlib123dllx64\dll_x64\zlibwapi.dll" ` + gpu.PSQuote(dir)}}})
}

// judgeCUDAPathWindows: the toolkit's installer sets CUDA_PATH and
// CUDA_PATH_V12_4; after an uninstall they may name a folder that is
// gone, and with two toolkits CUDA_PATH may name another one than the
// nvcc on PATH (CMake and torch's extensions build with CUDA_PATH).
func (j *judge) judgeCUDAPathWindows() {
	kitAt := func(dir string) (gpu.Toolkit, bool) {
		for _, t := range j.f.CUDA.Toolkits {
			if strings.EqualFold(strings.TrimRight(t.Path, `\`), strings.TrimRight(dir, `\`)) {
				return t, true
			}
		}
		return gpu.Toolkit{}, false
	}
	var onPath gpu.Toolkit
	for _, t := range j.f.CUDA.Toolkits {
		if t.OnPath {
			onPath = t
		}
	}
	for _, ev := range j.f.Env {
		if !ev.Set || ev.Value == "" || !strings.HasPrefix(ev.Name, "CUDA_PATH") {
			continue
		}
		kit, ok := kitAt(ev.Value)
		switch {
		case !ok && ev.Name == "CUDA_PATH":
			fix := []gpu.Step{{Text: "Remove it for new terminals (and from this one):", Command: psUserEnvSet("CUDA_PATH", "") + "; Remove-Item Env:CUDA_PATH"}}
			if onPath.Path != "" {
				fix = []gpu.Step{{Text: "Point it at the toolkit whose nvcc is on PATH, for new terminals:", Command: psUserEnvSet("CUDA_PATH", onPath.Path)}}
			}
			j.add(gpu.Finding{ID: "cuda_home_invalid", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
				Title: "CUDA_PATH names a folder with no CUDA toolkit", Evidence: []string{"CUDA_PATH=" + ev.Value}, Fix: fix})
		case !ok:
			j.add(gpu.Finding{ID: "cuda_path_version_stale", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
				Title:    ev.Name + " names a CUDA toolkit that is not installed (left by an uninstalled toolkit)",
				Evidence: []string{ev.Name + "=" + ev.Value},
				Fix:      []gpu.Step{{Text: "Remove it (a system variable: in a PowerShell run as administrator):", Command: fmt.Sprintf("[Environment]::SetEnvironmentVariable('%s', $null, 'Machine')", ev.Name)}}})
		case ev.Name == "CUDA_PATH" && onPath.Path != "" && kit.Path != onPath.Path:
			j.add(gpu.Finding{ID: "cuda_path_not_nvcc", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
				Title: fmt.Sprintf("CUDA_PATH names CUDA %s, but the nvcc on PATH is CUDA %s: builds mix the two", gpu.OrUnknown(kit.Version), gpu.OrUnknown(onPath.Version)),
				Evidence: []string{"CUDA_PATH=" + ev.Value, fmt.Sprintf("nvcc on PATH: %s\\bin\\nvcc.exe (CUDA %s)", onPath.Path, gpu.OrUnknown(onPath.Version)),
					"CMake's FindCUDAToolkit and torch's C++/CUDA extensions build with CUDA_PATH"},
				Fix: []gpu.Step{{Text: "Make CUDA_PATH name the toolkit on PATH, for new terminals:", Command: psUserEnvSet("CUDA_PATH", onPath.Path)}}})
		}
	}
}

// judgeNvidiaSMIPath: older drivers put nvidia-smi.exe under
// Program Files\NVIDIA Corporation\NVSMI, off PATH ("'nvidia-smi' is
// not recognized"), though the driver works.
func (j *judge) judgeNvidiaSMIPath(w *gpu.WindowsFacts) {
	if w.NvidiaSMI == "" || w.NvidiaSMIOnPath {
		return
	}
	j.add(gpu.Finding{ID: "nvidia_smi_not_on_path", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    "nvidia-smi is installed but not on PATH: typing nvidia-smi says it is not recognized",
		Evidence: []string{"found " + w.NvidiaSMI + ", in no PATH folder"},
		Fix: []gpu.Step{{Text: "Run it by its full path:", Command: gpu.CommandWord(w.NvidiaSMI)},
			{Text: "Or add its folder to your PATH, then open a new terminal:", Command: psUserPathAdd(winDir(w.NvidiaSMI))}}})
}

// judgeDriverModels: a GPU under WDDM (every GeForce, and the default of
// most others) shares Windows' display driver model: NVML reports no
// per-process GPU memory, Task Manager's "3D" graph does not show CUDA
// work, and Windows resets a kernel that runs longer than its TDR delay
// (2 s by default). A switch to TCC takes effect at the next restart.
func (j *judge) judgeDriverModels() {
	for _, g := range j.f.NVML.GPUs {
		ev := []string{fmt.Sprintf("GPU %d (%s): driver model %s (nvidia-smi)", g.Index, g.Name, g.DriverModel)}
		if g.DriverModelPending != "" && g.DriverModel != "" && g.DriverModelPending != g.DriverModel {
			j.add(gpu.Finding{ID: "driver_model_pending", Cause: gpu.CauseDriverMissing, Severity: gpu.SevWarning,
				Title:    fmt.Sprintf("GPU %d switches from %s to %s at the next restart", g.Index, g.DriverModel, g.DriverModelPending),
				Evidence: append(ev, "pending driver model: "+g.DriverModelPending),
				Fix:      []gpu.Step{{Text: "Restart Windows to finish the switch:", Command: psRestart}}})
		}
		if g.DriverModel != "WDDM" {
			continue
		}
		fix := []gpu.Step{{Text: "To see CUDA work, pick the \"Cuda\" (or \"Compute_0\") graph in Task Manager's GPU page instead of \"3D\", or watch nvidia-smi:", Command: "nvidia-smi -l 1"}}
		if !strings.Contains(g.Name, "GeForce") {
			fix = append(fix, gpu.Step{Text: "This GPU may support TCC (compute only, no display on it). To switch it, in a PowerShell run as administrator, then restart:",
				Command: fmt.Sprintf("nvidia-smi -i %d -dm TCC", g.Index)})
		}
		j.add(gpu.Finding{ID: "wddm_driver_model", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
			Title: fmt.Sprintf("GPU %d runs under WDDM: NVML shows no per-process GPU memory, Task Manager's \"3D\" graph does not show CUDA work, and Windows resets a kernel that runs longer than 2 s", g.Index),
			Evidence: append(ev, "under WDDM the driver gives NVML no per-process data (nvidia-smi prints N/A in the process table)",
				"Windows' Timeout Detection and Recovery (TDR) resets the GPU after TdrDelay (2 s by default)"),
			Fix: fix})
	}
}

// judgeLongPaths: with LongPathsEnabled off, pip fails to install a
// package whose files lie deeper than 260 characters ("[Errno 2] No such
// file or directory ... HINT: ... Windows Long Path support").
func (j *judge) judgeLongPaths(w *gpu.WindowsFacts) {
	if w.LongPathsEnabled == nil || *w.LongPathsEnabled {
		return
	}
	j.add(gpu.Finding{ID: "windows_long_paths_disabled", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    "Windows long paths are off: pip fails to install packages whose files lie deeper than 260 characters (torch, TensorFlow and xformers into a deep venv)",
		Evidence: []string{`HKLM\SYSTEM\CurrentControlSet\Control\FileSystem: LongPathsEnabled is 0 or absent`},
		Fix: []gpu.Step{{Text: "Turn long paths on, in a PowerShell run as administrator (then open a new terminal):",
			Command: `New-ItemProperty -Path 'HKLM:\SYSTEM\CurrentControlSet\Control\FileSystem' -Name LongPathsEnabled -Value 1 -PropertyType DWORD -Force`}}})
}

// judgePythonAlias: without a Python ahead of it on PATH, `python` is
// the Microsoft Store's App Execution Alias, which opens the Store (or,
// with a Store Python installed, runs that one).
func (j *judge) judgePythonAlias(w *gpu.WindowsFacts) {
	if w.PythonAlias == "" || w.StorePython {
		return
	}
	ev := []string{"first python on PATH: " + w.PythonAlias + " (the Store's App Execution Alias)", "no Store Python is installed"}
	fix := []gpu.Step{{Text: "Turn the alias off: Settings → Apps → Advanced app settings → App execution aliases → python.exe and python3.exe off. Then run Python through the py launcher, or put your Python's folder on PATH."}}
	sev := gpu.SevInfo
	for _, e := range j.f.Pythons {
		if e.Kind == "venv" {
			continue
		}
		ev = append(ev, "a Python is installed at "+e.Interpreter+" but PATH does not reach it first")
		fix = append(fix, gpu.Step{Text: "Or put that Python first on your PATH, then open a new terminal:", Command: psUserPathFirst(winDir(e.Interpreter), winDir(e.Interpreter)+`\Scripts`)})
		sev = gpu.SevWarning
		break
	}
	j.add(gpu.Finding{ID: "python_is_store_alias", Cause: gpu.CauseConflictingInstalls, Severity: sev,
		Title: "Typing python opens the Microsoft Store: no Python comes before the Store's alias on PATH", Evidence: ev, Fix: fix})
}

// defaultPython is the command a user types for Python: the py launcher
// on Windows when it is there, else python (python3 is the Store's alias
// there); python3 elsewhere.
func (j *judge) defaultPython() string {
	switch {
	case j.windows() && j.f.Windows != nil && j.f.Windows.PyLauncher != "":
		return "py"
	case j.windows():
		return "python"
	}
	return "python3"
}

// freshVenv is the command that makes a fresh virtual environment for
// GPU work, and the path of its python: in the home folder with POSIX
// commands, in the user's profile folder with PowerShell on Windows
// (through the py launcher when there is one).
func (j *judge) freshVenv() (create, python string) {
	if !j.windows() {
		return "python3 -m venv ~/.venv-gpu", "~/.venv-gpu/bin/python"
	}
	home := `C:\Users\Public`
	if ev, ok := j.f.EnvVar("USERPROFILE"); ok && gpu.IsWindowsPath(ev.Value) {
		home = strings.TrimRight(ev.Value, `\`)
	}
	dir := home + `\.venv-gpu`
	launcher := "python"
	if j.f.Windows != nil && j.f.Windows.PyLauncher != "" {
		launcher = "py"
	}
	return launcher + " -m venv " + gpu.PSQuote(dir), dir + `\Scripts\python.exe`
}

// freshVenvCommand is freshVenv's command alone.
func (j *judge) freshVenvCommand() string {
	create, _ := j.freshVenv()
	return create
}
