package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fakeRunner answers commands from recorded outputs; "hang" blocks until
// the context ends, like a stuck nvcc.
type fakeRunner map[string]string

func (r fakeRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	key := strings.TrimSpace(name + " " + strings.Join(args, " "))
	if strings.HasSuffix(name, "python3") || strings.HasSuffix(name, "python") {
		if len(args) > 0 && args[0] == "-c" {
			key = name + " -c DEEP"
		}
	}
	out, ok := r[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, os.ErrNotExist)
	}
	if out == "hang" {
		<-ctx.Done()
		return nil, fmt.Errorf("%s: %w", key, errors.Join(ErrTimeout, ctx.Err()))
	}
	return []byte(out), nil
}

// gpuSpec describes one mock GPU.
type gpuSpec struct {
	name       string
	cc         [2]int
	totalMiB   uint64
	usedMiB    uint64
	processes  []nvml.ProcessInfo
	migEnabled bool
}

// machine is a fake computer: files under a temporary root, an NVML mock
// and recorded command outputs.
type machine struct {
	files   map[string]string // path → content; a path ending in "/" is a folder
	links   map[string]string // path → link target
	env     map[string]string
	run     fakeRunner
	nvml    nvml.Interface
	timeout time.Duration
	deep    bool
}

func (m *machine) build(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range m.files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(p, "/bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range m.links {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func (m *machine) probe(t *testing.T) *Facts {
	t.Helper()
	root := m.build(t)
	to := m.timeout
	if to == 0 {
		to = 2 * time.Second
	}
	return Probe(context.Background(), Options{
		Root: root, Home: "/home/ada", Cwd: "/home/ada/project", Environ: m.env,
		NVML: m.nvml, Runner: m.run, Timeout: to, GOOS: "linux", GOARCH: "amd64", Deep: m.deep,
		Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) },
	})
}

// mockNVML is go-nvml's DGX A100 mock cut to the given GPUs.
func mockNVML(driver string, cuda int, gpus ...gpuSpec) *dgxa100.Server {
	s := dgxa100.New()
	s.DriverVersion, s.CudaDriverVersion = driver, cuda
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return len(gpus), nvml.SUCCESS }
	for i, g := range gpus {
		d := s.Devices[i].(*dgxa100.Device)
		d.UUID = fmt.Sprintf("GPU-%08d-1111-2222-3333-444455556666", i)
		d.Name = g.name
		d.CudaComputeCapability = dgxa100.CudaComputeCapability{Major: g.cc[0], Minor: g.cc[1]}
		d.MemoryInfo = nvml.Memory{Total: g.totalMiB << 20, Used: g.usedMiB << 20, Free: (g.totalMiB - g.usedMiB) << 20}
		d.MigMode = nvml.DEVICE_MIG_DISABLE
		if g.migEnabled {
			d.MigMode = nvml.DEVICE_MIG_ENABLE
		}
		busID := fmt.Sprintf("00000000:%02X:00.0", i+1)
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for k := 0; k < len(busID); k++ {
				p.BusId[k] = busID[k]
			}
			return p, nvml.SUCCESS
		}
		procs := g.processes
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
	}
	return s
}

// failingNVML is an NVML whose Init returns the given code.
func failingNVML(r nvml.Return) *dgxa100.Server {
	s := dgxa100.New()
	s.InitFunc = func() nvml.Return { return r }
	return s
}

const (
	procVersion580 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 10:00:00 UTC 2025\nGCC version:  gcc version 12.2.0\n"
	procVersion550 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
	modulesNvidia  = "nvidia_uvm 1867776 0 - Live 0x0000000000000000 (PO)\nnvidia_drm 118784 2 - Live 0x0000000000000000 (PO)\nnvidia 62783488 21 nvidia_uvm, Live 0x0000000000000000 (PO)\nsnd 126976 0 - Live\n"
	ldconfig580    = "\t4 libs found in cache `/etc/ld.so.cache'\n\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
)

// baseMachine is an Ubuntu workstation with one NVIDIA GPU on PCI, the
// driver's module loaded, and a project venv that `python` runs.
func baseMachine(nv nvml.Interface) *machine {
	return &machine{
		files: map[string]string{
			"/etc/os-release":                                       "ID=ubuntu\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
			"/proc/sys/kernel/osrelease":                            "6.8.0-45-generic\n",
			"/proc/modules":                                         modulesNvidia,
			"/proc/driver/nvidia/version":                           procVersion580,
			"/dev/nvidia0":                                          "",
			"/dev/nvidiactl":                                        "",
			"/dev/nvidia-uvm":                                       "",
			"/sys/bus/pci/devices/0000:01:00.0/vendor":              "0x10de\n",
			"/sys/bus/pci/devices/0000:01:00.0/device":              "0x2330\n",
			"/sys/bus/pci/devices/0000:01:00.0/class":               "0x030200\n",
			"/sys/bus/pci/devices/0000:00:1f.0/vendor":              "0x8086\n",
			"/sys/bus/pci/devices/0000:00:1f.0/class":               "0x060100\n",
			"/sys/bus/pci/drivers/nvidia/":                          "",
			"/sbin/ldconfig":                                        "#!/bin/sh\n",
			"/usr/bin/python3.12":                                   "",
			"/home/ada/project/.venv/pyvenv.cfg":                    "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
			"/home/ada/project/.venv/bin/python":                    "",
			"/home/ada/project/.venv/lib/python3.12/site-packages/": "",
			"/usr/lib/python3/dist-packages/":                       "",
		},
		links: map[string]string{
			"/sys/bus/pci/devices/0000:01:00.0/driver": "../../../bus/pci/drivers/nvidia",
			"/usr/bin/python3":                         "python3.12",
		},
		env: map[string]string{
			"PATH": "/home/ada/project/.venv/bin:/usr/local/bin:/usr/bin:/bin",
			"HOME": "/home/ada",
		},
		run:  fakeRunner{"/sbin/ldconfig -p": ldconfig580},
		nvml: nv,
	}
}

// withTorch installs torch (and its cuDNN wheel) into a site-packages folder.
func (m *machine) withTorch(site, version, cuda string) *machine {
	m.files[site+"/torch-"+version+".dist-info/METADATA"] = "Name: torch\nVersion: " + version + "\n"
	cudaLine := "cuda: Optional[str] = None\n"
	if cuda != "" {
		cudaLine = "cuda: Optional[str] = '" + cuda + "'\n"
		major := strings.Split(cuda, ".")[0]
		m.files[site+"/nvidia_cudnn_cu"+major+"-9.10.2.21.dist-info/METADATA"] = "Name: nvidia-cudnn-cu" + major + "\n"
	}
	m.files[site+"/torch/version.py"] = "from typing import Optional\n__version__ = '" + version + "'\ndebug = False\n" + cudaLine + "git_version = 'abc'\nhip: Optional[str] = None\n"
	return m
}

const venvSite = "/home/ada/project/.venv/lib/python3.12/site-packages"

var (
	h100    = gpuSpec{name: "NVIDIA H100 80GB HBM3", cc: [2]int{9, 0}, totalMiB: 81559, usedMiB: 1}
	gtx1080 = gpuSpec{name: "NVIDIA GeForce GTX 1080", cc: [2]int{6, 1}, totalMiB: 8192, usedMiB: 200}
	rtx5090 = gpuSpec{name: "NVIDIA GeForce RTX 5090", cc: [2]int{12, 0}, totalMiB: 32607, usedMiB: 400}
)

type scenario struct {
	name    string
	machine func() *machine
	ready   bool
	top     string // the ID of the most important finding
	cause   Cause
	has     []string // other finding IDs that must be present
}

func scenarios() []scenario {
	return []scenario{
		{name: "h100_driver580_torch_cu130", ready: true, top: "torch_wheel_advice", cause: CauseOther,
			has: []string{"gpu_ok"},
			machine: func() *machine {
				return baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
			}},
		{name: "gtx1080_torch_cu130", top: "arch_not_in_torch_build", cause: CauseArchUnsupported,
			has: []string{"end_of_support_pascal", "torch_wheel_advice"},
			machine: func() *machine {
				return baseMachine(mockNVML("580.95.05", 13000, gtx1080)).withTorch(venvSite, "2.11.0+cu130", "13.0")
			}},
		{name: "rtx5090_torch_cu124", top: "arch_not_in_torch_build", cause: CauseArchUnsupported,
			machine: func() *machine {
				return baseMachine(mockNVML("580.95.05", 13000, rtx5090)).withTorch(venvSite, "2.5.1+cu124", "12.4")
			}},
		{name: "driver550_torch_cu130", top: "driver_too_old_for_torch", cause: CauseDriverTooOld,
			machine: func() *machine {
				m := baseMachine(mockNVML("550.54.15", 12040, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
				m.files["/proc/driver/nvidia/version"] = procVersion550
				return m
			}},
		{name: "cpu_wheel_with_gpu", top: "torch_cpu_only", cause: CauseCPUOnlyBuild,
			machine: func() *machine {
				return baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.3.0+cpu", "")
			}},
		{name: "driver_not_loaded", top: "module_not_loaded", cause: CauseDriverMissing,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_DRIVER_NOT_LOADED))
				m.files["/proc/modules"] = "snd 126976 0 - Live\n"
				delete(m.files, "/proc/driver/nvidia/version")
				return m
			}},
		{name: "secure_boot_blocks_module", top: "secure_boot_blocks_module", cause: CauseDriverMissing,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_DRIVER_NOT_LOADED))
				m.files["/proc/modules"] = "snd 126976 0 - Live\n"
				m.files["/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"] = "\x06\x00\x00\x00\x01"
				return m
			}},
		{name: "rm_mismatch", top: "reboot_needed", cause: CauseDriverMissing,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_LIB_RM_VERSION_MISMATCH))
				m.files["/proc/driver/nvidia/version"] = procVersion550
				m.files["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05"] = ""
				m.links["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"] = "libnvidia-ml.so.580.95.05"
				return m
			}},
		{name: "no_permission", top: "nvml_no_permission", cause: CauseDriverMissing,
			machine: func() *machine { return baseMachine(failingNVML(nvml.ERROR_NO_PERMISSION)) }},
		{name: "memory_95_percent_taken", top: "gpu_memory_in_use", cause: CauseOutOfMemory,
			machine: func() *machine {
				g := h100
				g.usedMiB = 77500
				g.processes = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 77400 << 20}}
				m := baseMachine(mockNVML("580.95.05", 13000, g)).withTorch(venvSite, "2.11.0+cu130", "13.0")
				m.files["/proc/4242/comm"] = "python3\n"
				return m
			}},
		{name: "no_nvidia_gpu", top: "no_nvidia_gpu", cause: CauseOther,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_LIBRARY_NOT_FOUND))
				for p := range m.files {
					if strings.Contains(p, "0000:01:00.0") || strings.HasPrefix(p, "/dev/") || strings.Contains(p, "driver/nvidia") {
						delete(m.files, p)
					}
				}
				delete(m.links, "/sys/bus/pci/devices/0000:01:00.0/driver")
				m.files["/proc/modules"] = "snd 126976 0 - Live\n"
				return m
			}},
		{name: "driver_not_installed", top: "driver_not_installed", cause: CauseDriverMissing,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_LIBRARY_NOT_FOUND))
				delete(m.links, "/sys/bus/pci/devices/0000:01:00.0/driver")
				m.files["/proc/modules"] = "snd 126976 0 - Live\n"
				delete(m.files, "/proc/driver/nvidia/version")
				return m
			}},
		{name: "nouveau", top: "nouveau_loaded", cause: CauseDriverMissing,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_LIBRARY_NOT_FOUND))
				m.files["/proc/modules"] = "nouveau 2785280 3 - Live\n"
				m.files["/sys/bus/pci/drivers/nouveau/"] = ""
				m.links["/sys/bus/pci/devices/0000:01:00.0/driver"] = "../../../bus/pci/drivers/nouveau"
				return m
			}},
		{name: "cuda_visible_devices_empty", top: "cuda_visible_devices_hides_all", cause: CauseDeviceSelection,
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
				m.env["CUDA_VISIBLE_DEVICES"] = ""
				return m
			}},
		{name: "cuda_visible_devices_minus_one", top: "cuda_visible_devices_hides_all", cause: CauseDeviceSelection,
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, h100, gtx1080))
				m.env["CUDA_VISIBLE_DEVICES"] = "-1"
				return m
			}},
		{name: "several_installs_and_yolo", top: "torch_cpu_only", cause: CauseCPUOnlyBuild,
			has: []string{"python_runs_other_env", "yolo_runs_other_env", "several_torch_installs", "torch_installed_twice"},
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, h100))
				// `python` is the venv (no torch); conda has the CUDA build; yolo
				// runs the system python whose user site shadows a CPU build.
				m.files["/home/ada/miniconda3/envs/yolo/bin/python3.11"] = ""
				m.files["/home/ada/miniconda3/envs/yolo/conda-meta/history"] = ""
				m.links["/home/ada/miniconda3/envs/yolo/bin/python"] = "python3.11"
				m.withTorch("/home/ada/miniconda3/envs/yolo/lib/python3.11/site-packages", "2.11.0+cu130", "13.0")
				m.withTorch("/home/ada/.local/lib/python3.12/site-packages", "2.4.0+cpu", "")
				m.withTorch("/usr/lib/python3/dist-packages", "2.2.0", "")
				m.files["/home/ada/.local/bin/yolo"] = "#!/usr/bin/python3\nimport sys\n"
				m.env["PATH"] = "/home/ada/project/.venv/bin:/home/ada/.local/bin:/usr/bin"
				return m
			}},
		{name: "deep_h100_works", ready: true, top: "torch_wheel_advice", cause: CauseOther,
			has: []string{"deep_gpu_works", "gpu_ok"},
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
				m.deep = true
				m.run["/home/ada/project/.venv/bin/python -c DEEP"] = `GPUWIZARD_DEEP {"ran": true, "torch": "2.11.0+cu130", "torch_cuda": "13.0", "cuda_available": true, "device_count": 1, "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"], "cudnn": "91701", "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "matmul_ok": true, "conv_ok": true}], "warnings": []}`
				return m
			}},
		{name: "deep_rtx5090_no_kernel_image", top: "arch_not_in_torch_build", cause: CauseArchUnsupported,
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, rtx5090)).withTorch(venvSite, "2.5.1+cu124", "12.4")
				m.deep = true
				m.run["/home/ada/project/.venv/bin/python -c DEEP"] = "/usr/lib/python3/site-packages/torch/cuda/__init__.py:209: UserWarning: \n" +
					`GPUWIZARD_DEEP {"ran": true, "torch": "2.5.1+cu124", "torch_cuda": "12.4", "cuda_available": true, "device_count": 1, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "cudnn": "90100", "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0", "matmul_ok": false, "conv_ok": false, "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device"}], "warnings": ["NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."]}`
				return m
			}},
		{name: "tensorflow_without_cuda_libs", top: "tf_gpu_libs_missing", cause: CauseTFGPULibs,
			machine: func() *machine {
				m := baseMachine(mockNVML("580.95.05", 13000, h100))
				m.files[venvSite+"/tensorflow-2.15.1.dist-info/METADATA"] = "Name: tensorflow\n"
				m.files[venvSite+"/tensorflow/python/platform/build_info.py"] = "import collections\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), ('cuda_compute_capabilities', ['sm_50', 'sm_60', 'sm_70', 'sm_80', 'compute_90']), ('cuda_version', '12.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])\n"
				return m
			}},
		{name: "wsl2_without_windows_driver", top: "wsl_no_windows_driver", cause: CauseWSLOrContainer,
			machine: func() *machine {
				m := baseMachine(failingNVML(nvml.ERROR_LIBRARY_NOT_FOUND))
				m.files["/proc/sys/kernel/osrelease"] = "5.15.153.1-microsoft-standard-WSL2\n"
				m.files["/dev/dxg"] = ""
				m.files["/usr/lib/wsl/lib/"] = ""
				return m
			}},
	}
}

func TestScenarios(t *testing.T) {
	matrix := mustMatrix(t)
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			f := sc.machine().probe(t)
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
				if fd.Severity == SevError && len(fd.Fix) == 0 {
					t.Errorf("error finding %s has no fix", fd.ID)
				}
				if fd.Severity != SevOK && len(fd.Evidence) == 0 {
					t.Errorf("finding %s has no evidence", fd.ID)
				}
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf, false); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "golden", sc.name+".txt"), buf.Bytes())
			// The facts double as saved-facts fixtures for the CLI's --facts.
			f.Sources = stableSources(f.Sources)
			js, err := json.MarshalIndent(f, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "facts", sc.name+".json"), append(js, '\n'))
		})
	}
}

func hasFinding(r Report, id string) bool {
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
		t.Fatalf("%v (run go test ./gpu -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// stableSources zeroes the timings so saved facts do not change run to run.
func stableSources(in []SourceStatus) []SourceStatus {
	out := make([]SourceStatus, len(in))
	for i, s := range in {
		s.Millis = 0
		out[i] = s
	}
	return out
}

func TestProbeSurvivesHangsAndPanics(t *testing.T) {
	nv := mockNVML("580.95.05", 13000, h100)
	nv.InitFunc = func() nvml.Return {
		time.Sleep(3 * time.Second) // a driver call that never comes back in time
		return nvml.SUCCESS
	}
	m := baseMachine(nv)
	m.files["/usr/local/cuda-12.4/bin/nvcc"] = ""
	m.env["PATH"] = "/usr/local/cuda-12.4/bin:" + m.env["PATH"]
	m.run["/usr/local/cuda-12.4/bin/nvcc --version"] = "hang"
	m.timeout = 200 * time.Millisecond
	start := time.Now()
	f := m.probe(t)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("probe took %s with a 200ms timeout per source", d)
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

	crash := mockNVML("580.95.05", 13000, h100)
	crash.InitFunc = func() nvml.Return { panic("segfault in libnvidia-ml") }
	f = baseMachine(crash).probe(t)
	if f.NVML.Status != NVMLError || !strings.Contains(f.NVML.Error, "crashed") {
		t.Fatalf("NVML panic: status %q error %q", f.NVML.Status, f.NVML.Error)
	}
	// A GPU whose getters panic (methods the mock lacks) still yields a GPU.
	odd := mockNVML("580.95.05", 13000, h100)
	odd.Devices[0].(*dgxa100.Device).GetNameFunc = nil
	f = baseMachine(odd).probe(t)
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
	matrix, err := LoadMatrix()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		m := baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
		for _, p := range []string{"/proc/driver/nvidia/version", "/proc/modules", "/etc/os-release",
			venvSite + "/torch/version.py", "/home/ada/project/.venv/pyvenv.cfg", "/usr/local/cuda/version.json",
			"/usr/local/cuda/version.txt", "/sys/bus/pci/devices/0000:01:00.0/class", "/usr/include/cudnn_version.h"} {
			m.files[p] = s
		}
		m.files["/usr/local/cuda/bin/nvcc"] = ""
		m.run["/sbin/ldconfig -p"] = s
		facts := m.probe(t)
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
	m := baseMachine(mockNVML("580.95.05", 13000, h100)).withTorch(venvSite, "2.11.0+cu130", "13.0")
	root := m.build(b)
	matrix := mustMatrix(b)
	opts := Options{Root: root, Home: "/home/ada", Cwd: "/home/ada/project", Environ: m.env, NVML: m.nvml, Runner: m.run, GOOS: "linux", GOARCH: "amd64"}
	b.ReportAllocs()
	for b.Loop() {
		f := Probe(context.Background(), opts)
		if r := Diagnose(f, matrix); !r.Ready {
			b.Fatal(r.Verdict)
		}
	}
}

func TestJAXBuilds(t *testing.T) {
	m := baseMachine(mockNVML("580.95.05", 13000, h100))
	m.files[venvSite+"/jaxlib-0.4.38.dist-info/METADATA"] = "Name: jaxlib\n"
	m.files[venvSite+"/jax_cuda12_plugin-0.4.38.dist-info/METADATA"] = "Name: jax-cuda12-plugin\n"
	f := m.probe(t)
	pk, ok := f.Pythons[0].Package("jaxlib")
	if !ok || pk.CUDA != "12" || pk.CPUOnly {
		t.Fatalf("jaxlib with the CUDA 12 plugin: %+v", pk)
	}
	m2 := baseMachine(mockNVML("580.95.05", 13000, h100))
	m2.files[venvSite+"/jaxlib-0.4.38.dist-info/METADATA"] = "Name: jaxlib\n"
	pk, _ = m2.probe(t).Pythons[0].Package("jaxlib")
	if !pk.CPUOnly {
		t.Fatalf("jaxlib alone is the CPU build: %+v", pk)
	}
}
