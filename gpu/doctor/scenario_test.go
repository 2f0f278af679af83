package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gpuwizard/gpu/nvml"
)

var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/golden")

// testMatrix is the compatibility matrix, parsed once: the rules only read
// it, and some tests diagnose thousands of texts.
var testMatrix = sync.OnceValues(compat.LoadMatrix)

func mustMatrix(t testing.TB) *compat.Matrix {
	t.Helper()
	m, err := testMatrix()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type scenario struct {
	name    string
	machine func() *fakemachine.Machine
	ready   bool
	top     string // the ID of the most important finding
	cause   gpu.Cause
	has     []string // other finding IDs that must be present
	// winMachine builds a Windows machine (winscenario_test.go) instead.
	winMachine func(*testing.T) *fakemachine.Machine
}

func scenarios() []scenario {
	return []scenario{
		{name: "h100_driver580_torch_cu130", ready: true, top: "gpu_ok", cause: gpu.CauseOther,
			machine: func() *fakemachine.Machine {
				return fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
			}},
		{name: "gtx1080_torch_cu130", top: "arch_not_in_torch_build", cause: gpu.CauseArchUnsupported,
			has: []string{"end_of_support_pascal"},
			machine: func() *fakemachine.Machine {
				return fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.GTX1080())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
			}},
		{name: "rtx5090_torch_cu124", top: "arch_not_in_torch_build", cause: gpu.CauseArchUnsupported,
			machine: func() *fakemachine.Machine {
				return fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.RTX5090())).WithTorch(fakemachine.VenvSite, "2.5.1+cu124", "12.4")
			}},
		{name: "driver550_torch_cu130", top: "driver_too_old_for_torch", cause: gpu.CauseDriverTooOld,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("550.54.15", 12040, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
				m.Files["/proc/driver/nvidia/version"] = fakemachine.ProcVersion550
				return m
			}},
		{name: "cpu_wheel_with_gpu", top: "torch_cpu_only", cause: gpu.CauseCPUOnlyBuild,
			machine: func() *fakemachine.Machine {
				return fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.3.0+cpu", "")
			}},
		{name: "driver_not_loaded", top: "module_not_loaded", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded))
				m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
				delete(m.Files, "/proc/driver/nvidia/version")
				return m
			}},
		{name: "secure_boot_blocks_module", top: "secure_boot_blocks_module", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded))
				m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
				m.Files["/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"] = "\x06\x00\x00\x00\x01"
				return m
			}},
		{name: "rm_mismatch", top: "reboot_needed", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibRMVersionMismatch))
				m.Files["/proc/driver/nvidia/version"] = fakemachine.ProcVersion550
				m.Files["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05"] = ""
				m.Links["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"] = "libnvidia-ml.so.580.95.05"
				return m
			}},
		{name: "no_permission", top: "nvml_no_permission", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				return fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorNoPermission))
			}},
		{name: "memory_95_percent_taken", top: "gpu_memory_in_use", cause: gpu.CauseOutOfMemory,
			machine: func() *fakemachine.Machine {
				g := fakemachine.H100()
				g.UsedMiB = 77500
				g.Processes = []nvml.ProcessInfo{{PID: 4242, UsedGPUMemory: 77400 << 20}}
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, g)).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
				m.Files["/proc/4242/comm"] = "python3\n"
				return m
			}},
		{name: "no_nvidia_gpu", top: "no_nvidia_gpu", cause: gpu.CauseOther,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibraryNotFound))
				for p := range m.Files {
					if strings.Contains(p, "0000:01:00.0") || strings.HasPrefix(p, "/dev/") || strings.Contains(p, "driver/nvidia") {
						delete(m.Files, p)
					}
				}
				delete(m.Links, "/sys/bus/pci/devices/0000:01:00.0/driver")
				m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
				return m
			}},
		{name: "nvml_library_without_gpu", top: "no_nvidia_gpu", cause: gpu.CauseOther,
			machine: func() *fakemachine.Machine {
				// A distribution's libnvidia-ml (pulled in by a package)
				// answers "driver not loaded" on a machine without a GPU.
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded))
				for p := range m.Files {
					if strings.Contains(p, "0000:01:00.0") || strings.HasPrefix(p, "/dev/") || strings.Contains(p, "driver/nvidia") {
						delete(m.Files, p)
					}
				}
				delete(m.Links, "/sys/bus/pci/devices/0000:01:00.0/driver")
				m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
				return m
			}},
		{name: "driver_not_installed", top: "driver_not_installed", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibraryNotFound))
				delete(m.Links, "/sys/bus/pci/devices/0000:01:00.0/driver")
				m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
				delete(m.Files, "/proc/driver/nvidia/version")
				return m
			}},
		{name: "nouveau", top: "nouveau_loaded", cause: gpu.CauseDriverMissing,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibraryNotFound))
				m.Files["/proc/modules"] = "nouveau 2785280 3 - Live\n"
				m.Files["/sys/bus/pci/drivers/nouveau/"] = ""
				m.Links["/sys/bus/pci/devices/0000:01:00.0/driver"] = "../../../bus/pci/drivers/nouveau"
				return m
			}},
		{name: "cuda_visible_devices_empty", top: "cuda_visible_devices_hides_all", cause: gpu.CauseDeviceSelection,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
				m.Env["CUDA_VISIBLE_DEVICES"] = ""
				return m
			}},
		{name: "cuda_visible_devices_minus_one", top: "cuda_visible_devices_hides_all", cause: gpu.CauseDeviceSelection,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100(), fakemachine.GTX1080()))
				m.Env["CUDA_VISIBLE_DEVICES"] = "-1"
				return m
			}},
		{name: "several_installs_and_yolo", top: "torch_cpu_only", cause: gpu.CauseCPUOnlyBuild,
			has: []string{"python_runs_other_env", "yolo_runs_other_env", "several_torch_installs", "torch_installed_twice"},
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100()))
				// `python` is the venv (no torch); conda has the CUDA build; yolo
				// runs the system python whose user site shadows a CPU build.
				m.Files["/home/ada/miniconda3/envs/yolo/bin/python3.11"] = ""
				m.Files["/home/ada/miniconda3/envs/yolo/conda-meta/history"] = ""
				m.Links["/home/ada/miniconda3/envs/yolo/bin/python"] = "python3.11"
				m.WithTorch("/home/ada/miniconda3/envs/yolo/lib/python3.11/site-packages", "2.11.0+cu130", "13.0")
				m.WithTorch("/home/ada/.local/lib/python3.12/site-packages", "2.4.0+cpu", "")
				m.WithTorch("/usr/lib/python3/dist-packages", "2.2.0", "")
				m.Files["/home/ada/.local/bin/yolo"] = "#!/usr/bin/python3\nimport sys\n"
				m.Env["PATH"] = "/home/ada/project/.venv/bin:/home/ada/.local/bin:/usr/bin"
				return m
			}},
		{name: "deep_h100_works", ready: true, top: "deep_gpu_works", cause: gpu.CauseOther,
			has: []string{"deep_gpu_works", "gpu_ok"},
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
				m.Deep = true
				m.Run["/home/ada/project/.venv/bin/python -c DEEP"] = `GPUWIZARD_DEEP {"ran": true, "torch": "2.11.0+cu130", "torch_cuda": "13.0", "cuda_available": true, "device_count": 1, "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"], "cudnn": "91701", "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "matmul_ok": true, "conv_ok": true}], "warnings": []}`
				return m
			}},
		{name: "deep_rtx5090_no_kernel_image", top: "arch_not_in_torch_build", cause: gpu.CauseArchUnsupported,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.RTX5090())).WithTorch(fakemachine.VenvSite, "2.5.1+cu124", "12.4")
				m.Deep = true
				m.Run["/home/ada/project/.venv/bin/python -c DEEP"] = "/usr/lib/python3/site-packages/torch/cuda/__init__.py:209: UserWarning: \n" +
					`GPUWIZARD_DEEP {"ran": true, "torch": "2.5.1+cu124", "torch_cuda": "12.4", "cuda_available": true, "device_count": 1, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "cudnn": "90100", "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0", "matmul_ok": false, "conv_ok": false, "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device"}], "warnings": ["NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."]}`
				return m
			}},
		{name: "tensorflow_without_cuda_libs", top: "tf_gpu_libs_missing", cause: gpu.CauseTFGPULibs,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100()))
				m.Files[fakemachine.VenvSite+"/tensorflow-2.15.1.dist-info/METADATA"] = "Name: tensorflow\n"
				m.Files[fakemachine.VenvSite+"/tensorflow/python/platform/build_info.py"] = "import collections\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), ('cuda_compute_capabilities', ['sm_50', 'sm_60', 'sm_70', 'sm_80', 'compute_90']), ('cuda_version', '12.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])\n"
				return m
			}},
		{name: "wsl2_without_windows_driver", top: "wsl_no_windows_driver", cause: gpu.CauseWSLOrContainer,
			machine: func() *fakemachine.Machine {
				m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibraryNotFound))
				m.Files["/proc/sys/kernel/osrelease"] = "5.15.153.1-microsoft-standard-WSL2\n"
				m.Files["/dev/dxg"] = ""
				m.Files["/usr/lib/wsl/lib/"] = ""
				return m
			}},
	}
}

func TestScenarios(t *testing.T) {
	matrix := mustMatrix(t)
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			f := sc.machine().Probe(t)
			r := Diagnose(f, matrix)
			if len(r.Findings) == 0 {
				t.Fatal("no findings")
			}
			if r.Ready != sc.ready {
				t.Errorf("ready = %v, want %v (%s)", r.Ready, sc.ready, r.Verdict)
			}
			top := r.Findings[0]
			if top.ID != sc.top || top.Cause != sc.cause {
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
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf, false); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("..", "testdata", "golden", sc.name+".txt"), buf.Bytes())
			// The facts double as saved-facts fixtures for the CLI's --facts.
			f.Sources = stableSources(f.Sources)
			js, err := json.MarshalIndent(f, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("..", "testdata", "facts", sc.name+".json"), append(js, '\n'))
		})
	}
}

func hasFinding(r gpu.Report, id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gpu/doctor -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// stableSources zeroes the timings so saved facts do not change run to run.
func stableSources(in []gpu.SourceStatus) []gpu.SourceStatus {
	out := make([]gpu.SourceStatus, len(in))
	for i, s := range in {
		s.Millis = 0
		out[i] = s
	}
	return out
}

func TestProbeSurvivesHangsAndPanics(t *testing.T) {
	nv := fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())
	nv.InitFunc = func() nvml.Return {
		time.Sleep(3 * time.Second) // a driver call that never comes back in time
		return nvml.Success
	}
	m := fakemachine.BaseMachine(nv)
	m.Files["/usr/local/cuda-12.4/bin/nvcc"] = ""
	m.Env["PATH"] = "/usr/local/cuda-12.4/bin:" + m.Env["PATH"]
	m.Run["/usr/local/cuda-12.4/bin/nvcc --version"] = "hang"
	// A second per source: the sources that answer read the fake root
	// in time even under Wine on a loaded machine (200 ms did not); the
	// probe must still return well before NVML's 3 s hang ends.
	m.Timeout = time.Second
	start := time.Now()
	f := m.Probe(t)
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("probe took %s with a 1s timeout per source", d)
	}
	nvmlSt, _ := f.Source("nvml")
	kits, _ := f.Source("cuda_toolkits")
	if !nvmlSt.TimedOut || !kits.TimedOut {
		t.Fatalf("want nvml and cuda_toolkits timed out, got %+v / %+v", nvmlSt, kits)
	}
	if py, _ := f.Source("python"); !py.OK {
		t.Fatalf("python source should still answer: %+v", py)
	}
	r := Diagnose(f, mustMatrix(t))
	if r.Ready {
		t.Fatal("a machine whose NVML did not answer cannot be ready")
	}

	crash := fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())
	crash.InitFunc = func() nvml.Return { panic("segfault in libnvidia-ml") }
	f = fakemachine.BaseMachine(crash).Probe(t)
	if f.NVML.Status != gpu.NVMLError || !strings.Contains(f.NVML.Error, "crashed") {
		t.Fatalf("NVML panic: status %q error %q", f.NVML.Status, f.NVML.Error)
	}
	// A GPU whose getters panic (methods the mock lacks) still yields a GPU.
	odd := fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())
	odd.Devices[0].GetNameFunc = nil
	f = fakemachine.BaseMachine(odd).Probe(t)
	if len(f.NVML.GPUs) != 1 || f.NVML.GPUs[0].CC != "9.0" {
		t.Fatalf("GPUs = %+v", f.NVML.GPUs)
	}
}

// FuzzProbeGarbage writes arbitrary bytes into the files the probes parse
// and checks that probing and judging never panic.
func FuzzProbeGarbage(f *testing.F) {
	f.Add([]byte("__version__ = '2.1.0+cu121'\ncuda = '12.1'\n"))
	f.Add([]byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05\n"))
	f.Add([]byte{0xff, 0xfe, 0x00, '\n', '='})
	f.Add([]byte("{\"cuda\": {\"version\": \"12.x\"}}"))
	matrix, err := compat.LoadMatrix()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
		for _, p := range []string{"/proc/driver/nvidia/version", "/proc/modules", "/etc/os-release",
			fakemachine.VenvSite + "/torch/version.py", "/home/ada/project/.venv/pyvenv.cfg", "/usr/local/cuda/version.json",
			"/usr/local/cuda/version.txt", "/sys/bus/pci/devices/0000:01:00.0/class", "/usr/include/cudnn_version.h"} {
			m.Files[p] = s
		}
		m.Files["/usr/local/cuda/bin/nvcc"] = ""
		m.Run["/sbin/ldconfig -p"] = s
		facts := m.Probe(t)
		r := Diagnose(facts, matrix)
		if r.Verdict == "" {
			t.Fatal("no verdict")
		}
		var buf bytes.Buffer
		if err := r.WriteText(&buf, true); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkProbeAndDiagnose measures the quick check on a fake workstation
// (one GPU, two Python environments); bench/doctor.sh measures the binary
// on the real machine against collect_env.
func BenchmarkProbeAndDiagnose(b *testing.B) {
	m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
	root := m.Build(b)
	matrix := mustMatrix(b)
	opts := probe.Options{Root: root, Home: "/home/ada", Cwd: "/home/ada/project", Environ: m.Env, NVML: m.NVML, Runner: m.Run, GOOS: "linux", GOARCH: "amd64"}
	b.ReportAllocs()
	for b.Loop() {
		f := probe.Probe(context.Background(), opts)
		if r := Diagnose(f, matrix); !r.Ready {
			b.Fatal(r.Verdict)
		}
	}
}

func TestJAXBuilds(t *testing.T) {
	m := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100()))
	m.Files[fakemachine.VenvSite+"/jaxlib-0.4.38.dist-info/METADATA"] = "Name: jaxlib\n"
	m.Files[fakemachine.VenvSite+"/jax_cuda12_plugin-0.4.38.dist-info/METADATA"] = "Name: jax-cuda12-plugin\n"
	f := m.Probe(t)
	pk, ok := f.Pythons[0].Package("jaxlib")
	if !ok || pk.CUDA != "12" || pk.CPUOnly {
		t.Fatalf("jaxlib with the CUDA 12 plugin: %+v", pk)
	}
	m2 := fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100()))
	m2.Files[fakemachine.VenvSite+"/jaxlib-0.4.38.dist-info/METADATA"] = "Name: jaxlib\n"
	pk, _ = m2.Probe(t).Pythons[0].Package("jaxlib")
	if !pk.CPUOnly {
		t.Fatalf("jaxlib alone is the CPU build: %+v", pk)
	}
}
