package doctor

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/nvml"
)

// Paths of the fake Windows workstation (fakemachine.WindowsMachine).
const (
	winSys32   = `C:\Windows\System32`
	winKits    = `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA`
	winConda   = `C:\Users\ada\miniconda3`
	winPyLib   = fakemachine.WindowsPython + `\Lib\site-packages`
	winPSQuery = `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe -NoProfile -NonInteractive -Command Get-CimInstance -ClassName Win32_VideoController | Select-Object Name,PNPDeviceID,AdapterCompatibility,DriverVersion,Status,ConfigManagerErrorCode | ConvertTo-Csv -NoTypeInformation`
	winSMI     = `C:\Windows\System32\nvidia-smi.exe --query-gpu=index,pci.bus_id,name,driver_version,driver_model.current,driver_model.pending --format=csv,noheader`
	winLong    = `C:\Windows\System32\reg.exe query HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled`
	csvHeader  = "\"Name\",\"PNPDeviceID\",\"AdapterCompatibility\",\"DriverVersion\",\"Status\",\"ConfigManagerErrorCode\"\n"
	intelRow   = "\"Intel(R) UHD Graphics 770\",\"PCI\\VEN_8086&DEV_4680&SUBSYS_7D251462&REV_0C\\3&11583659&0&10\",\"Intel Corporation\",\"31.0.101.4502\",\"OK\",\"0\"\n"
)

// winWorkstation is the fake Windows workstation with its RTX 4090 on
// driver 560.94.
func winWorkstation(t *testing.T) *fakemachine.Machine {
	return fakemachine.WindowsMachine(t, fakemachine.MockNVML("560.94", 12060, fakemachine.RTX4090()))
}

// withoutDriver removes NVIDIA's driver: no nvml.dll (NVML cannot load),
// no nvcuda.dll, no nvidia-smi.exe, and the adapter row given.
func withoutDriver(m *fakemachine.Machine, adapterRows string) {
	m.NVML = fakemachine.FailingNVML(nvml.ErrorLibraryNotFound)
	for _, f := range []string{"nvml.dll", "nvcuda.dll", "nvidia-smi.exe"} {
		delete(m.Files, winSys32+`\`+f)
	}
	m.Run[winPSQuery] = csvHeader + adapterRows
}

// tensorflowIn installs TensorFlow with the given build_info into a
// conda environment that is activated (its python first on PATH).
func tensorflowIn(m *fakemachine.Machine, env, version, buildInfo string) {
	site := env + `\Lib\site-packages`
	m.Files[env+`\python.exe`] = ""
	m.Files[env+`\python310.dll`] = ""
	m.Files[env+`\conda-meta\history`] = ""
	m.Files[site+`\tensorflow-`+version+`.dist-info\METADATA`] = "Name: tensorflow\n"
	m.Files[site+`\tensorflow\python\platform\build_info.py`] = buildInfo
	m.Env["CONDA_PREFIX"] = env
	delete(m.Env, "VIRTUAL_ENV")
	m.Env["Path"] = env + ";" + env + `\Library\bin;` + env + `\Scripts;C:\WINDOWS\system32;C:\WINDOWS`
}

// tf210BuildInfo is TensorFlow 2.10's build_info.py on Windows (CUDA and
// cuDNN as its DLLs name them).
const tf210BuildInfo = "build_info = collections.OrderedDict([('cuda_version', '64_112'), ('cudart_dll_name', 'cudart64_112.dll'), ('cudnn_version', '64_8'), ('cudnn_dll_name', 'cudnn64_8.dll'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', False), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll'), ('nvcuda_dll_name', 'nvcuda.dll')])\n"

func winScenarios() []scenario {
	return []scenario{
		{name: "windows_rtx4090_torch_cu124", ready: true, top: "cudnn_not_on_path_windows", cause: gpu.CauseCudnnProblem,
			has: []string{"wddm_driver_model", "gpu_ok"}, winMachine: winWorkstation},
		{name: "windows_pypi_cpu_torch", top: "torch_cpu_only", cause: gpu.CauseCPUOnlyBuild,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				site := fakemachine.WindowsSite
				delete(m.Files, site+`\torch-2.5.1+cu124.dist-info\METADATA`)
				m.Files[site+`\torch-2.5.1.dist-info\METADATA`] = "Name: torch\nVersion: 2.5.1\n"
				m.Files[site+`\torch\version.py`] = "__version__ = '2.5.1'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n"
				return m
			}},
		{name: "windows_vc_runtime_missing", top: "vc_runtime_missing", cause: gpu.CauseOther,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				delete(m.Files, winSys32+`\msvcp140.dll`)
				return m
			}},
		{name: "windows_driver_not_installed", top: "driver_not_installed", cause: gpu.CauseDriverMissing,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				withoutDriver(m, "\"Microsoft Basic Display Adapter\",\"PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1\\4&2B8AD1C2&0&0008\",\"(Standard display types)\",\"10.0.22621.1\",\"OK\",\"0\"\n"+intelRow)
				return m
			}},
		{name: "windows_gpu_code_43", top: "windows_gpu_stopped_code_43", cause: gpu.CauseDriverMissing,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.NVML = fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded)
				m.Run[winPSQuery] = csvHeader + "\"NVIDIA GeForce RTX 4090\",\"PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1\\4&2B8AD1C2&0&0008\",\"NVIDIA\",\"32.0.15.6094\",\"Error\",\"43\"\n"
				return m
			}},
		{name: "windows_no_nvidia_gpu", top: "no_nvidia_gpu", cause: gpu.CauseOther,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				withoutDriver(m, intelRow)
				return m
			}},
		{name: "windows_tensorflow_2_15", top: "tf_windows_native_no_gpu", cause: gpu.CauseCPUOnlyBuild,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				tensorflowIn(m, winConda+`\envs\tf`, "2.15.1", "build_info = collections.OrderedDict([('is_cuda_build', False), ('is_rocm_build', False), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll')])\n")
				return m
			}},
		{name: "windows_tensorflow_2_10_without_cuda_dlls", top: "tf_gpu_libs_missing", cause: gpu.CauseTFGPULibs,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				tensorflowIn(m, winConda+`\envs\tf210`, "2.10.1", tf210BuildInfo)
				return m
			}},
		{name: "windows_tensorflow_2_10_conda_not_activated", ready: true, top: "cudnn_not_on_path_windows", cause: gpu.CauseCudnnProblem,
			has: []string{"tf_gpu_libs_need_activation"},
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				env := winConda + `\envs\tf210`
				tensorflowIn(m, env, "2.10.1", tf210BuildInfo)
				m.Files[env+`\Library\bin\cudart64_110.dll`] = ""
				m.Files[env+`\Library\bin\cudnn64_8.dll`] = ""
				// Not activated: the shell of the workstation, with its venv.
				fresh := winWorkstation(t)
				m.Env = fresh.Env
				return m
			}},
		{name: "windows_cuda_path_stale", ready: true, top: "cuda_home_invalid", cause: gpu.CauseOther,
			has: []string{"cuda_path_version_stale"},
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.Env["CUDA_PATH"] = winKits + `\v11.8`
				m.Env["CUDA_PATH_V11_8"] = winKits + `\v11.8`
				return m
			}},
		{name: "windows_cuda_path_other_toolkit", ready: true, top: "cuda_path_not_nvcc", cause: gpu.CauseConflictingInstalls,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.Files[winKits+`\v11.8\bin\nvcc.exe`] = ""
				m.Files[winKits+`\v11.8\version.json`] = `{"cuda": {"version": "11.8.0"}}`
				m.Env["CUDA_PATH"] = winKits + `\v11.8`
				m.Env["CUDA_PATH_V11_8"] = winKits + `\v11.8`
				return m
			}},
		{name: "windows_cudnn8_without_zlibwapi", ready: true, top: "cudnn_zlibwapi_missing", cause: gpu.CauseCudnnProblem,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.Files[winKits+`\v12.4\bin\cudnn64_8.dll`] = ""
				m.Files[winKits+`\v12.4\include\cudnn_version.h`] = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n"
				return m
			}},
		{name: "windows_old_driver_nvsmi_long_paths_off", ready: true, top: "cudnn_not_on_path_windows", cause: gpu.CauseCudnnProblem,
			has: []string{"nvidia_smi_not_on_path", "windows_long_paths_disabled"},
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				delete(m.Files, winSys32+`\nvidia-smi.exe`)
				m.Files[`C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe`] = ""
				m.Run[`C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe`+strings.TrimPrefix(winSMI, winSys32+`\nvidia-smi.exe`)] = m.Run[winSMI]
				m.Run[winLong] = "\r\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\FileSystem\r\n    LongPathsEnabled    REG_DWORD    0x0\r\n"
				return m
			}},
		{name: "windows_tcc_switch_pending", top: "driver_model_pending", cause: gpu.CauseDriverMissing, ready: true,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.Run[winSMI] = "0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 560.94, WDDM, TCC\n"
				return m
			}},
		{name: "windows_python_is_store_alias", top: "python_is_store_alias", cause: gpu.CauseConflictingInstalls, ready: true,
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				delete(m.Env, "VIRTUAL_ENV")
				m.Cwd = fakemachine.WindowsHome
				m.Env["Path"] = `C:\WINDOWS\system32;C:\WINDOWS;C:\Users\ada\AppData\Local\Microsoft\WindowsApps`
				return m
			}},
		{name: "windows_deep_rtx4090_works", ready: true, top: "cudnn_not_on_path_windows", cause: gpu.CauseCudnnProblem,
			has: []string{"deep_gpu_works", "gpu_ok"},
			winMachine: func(t *testing.T) *fakemachine.Machine {
				m := winWorkstation(t)
				m.Deep = true
				return m
			}},
	}
}

// posixOnly are what a Windows user cannot paste into PowerShell (5.1,
// Windows' own): POSIX shell syntax and Linux commands.
var posixOnly = regexp.MustCompile(`&&|\bsudo\b|\bexport \w+=|\$\(|\|\s*grep\b|~/|\bldconfig\b|\bapt(-get)?\b|\bdmesg\b|\bmodprobe\b|\blsmod\b|\bunset\b|\becho \$|/dev/|\bpython3\b`)

// TestWindowsScenarios judges the fake Windows workstation and its broken
// variants: each has its finding first, every error its fix, every
// finding its evidence, and every fix is a command PowerShell runs.
func TestWindowsScenarios(t *testing.T) {
	matrix := mustMatrix(t)
	for _, sc := range winScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			f := sc.winMachine(t).Probe(t)
			r := Diagnose(f, matrix)
			if r.Ready != sc.ready {
				t.Errorf("ready = %v, want %v (%s)", r.Ready, sc.ready, r.Verdict)
			}
			if len(r.Findings) == 0 {
				t.Fatal("no findings")
			}
			if top := r.Findings[0]; top.ID != sc.top || top.Cause != sc.cause {
				t.Errorf("top finding = %s (%s) %q; want %s (%s)", top.ID, top.Cause, top.Title, sc.top, sc.cause)
			}
			for _, id := range sc.has {
				if !hasFinding(r, id) {
					t.Errorf("missing finding %s", id)
				}
			}
			for _, fd := range r.Findings {
				if fd.Severity == gpu.SevError && len(fd.Fix) == 0 {
					t.Errorf("error finding %s has no fix", fd.ID)
				}
				if fd.Severity != gpu.SevOK && len(fd.Evidence) == 0 {
					t.Errorf("finding %s has no evidence", fd.ID)
				}
				for _, s := range fd.Fix {
					if m := posixOnly.FindString(s.Command); m != "" {
						t.Errorf("%s: the fix %q is not PowerShell (%q)", fd.ID, s.Command, m)
					}
				}
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf, false); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("..", "testdata", "golden", sc.name+".txt"), buf.Bytes())
			f.Sources = stableSources(f.Sources)
			js, err := json.MarshalIndent(f, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("..", "testdata", "facts", sc.name+".json"), append(js, '\n'))
		})
	}
}
