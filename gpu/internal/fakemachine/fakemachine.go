// Package fakemachine builds fake computers for the doctor's tests: files
// under a temporary root, a fake NVML (nvmlfake) with the wanted GPUs,
// and recorded command outputs.
package fakemachine

import (
	"context"
	"errors"
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

// Runner answers commands from recorded outputs; "hang" blocks until
// the context ends, like a stuck nvcc; "error: MESSAGE" fails as a
// command that prints MESSAGE on its standard error.
type Runner map[string]string

func (r Runner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	key := strings.TrimSpace(name + " " + strings.Join(args, " "))
	low := strings.ToLower(name)
	if strings.HasSuffix(low, "python3") || strings.HasSuffix(low, "python") || strings.HasSuffix(low, "python.exe") {
		if len(args) > 0 && args[0] == "-c" {
			key = name + " -c DEEP"
		}
	}
	out, ok := r[key]
	if !ok && strings.Contains(name, `\`) {
		// A Windows command: its path is read without case.
		for k, v := range r {
			if strings.EqualFold(k, key) {
				out, ok = v, true
				break
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, os.ErrNotExist)
	}
	if msg, failed := strings.CutPrefix(out, "error: "); failed {
		// A command that fails, saying msg on its standard error.
		return nil, fmt.Errorf("%s: exit status 1: %s", key, strings.TrimSpace(msg))
	}
	if out == "hang" {
		<-ctx.Done()
		return nil, fmt.Errorf("%s: %w", key, errors.Join(probe.ErrTimeout, ctx.Err()))
	}
	return []byte(out), nil
}

// GPUSpec describes one mock GPU.
type GPUSpec struct {
	Name       string
	CC         [2]int
	TotalMiB   uint64
	UsedMiB    uint64
	Processes  []nvml.ProcessInfo
	MIGEnabled bool
}

// Machine is a fake computer: files under a temporary root, an NVML mock
// and recorded command outputs.
type Machine struct {
	Files   map[string]string // path → content; a path ending in "/" (or `\` on Windows) is a folder
	Links   map[string]string // path → link target
	Env     map[string]string
	Run     Runner
	NVML    nvml.Library
	Timeout time.Duration
	Deep    bool
	// GOOS is the system the machine plays ("" is linux); Home and Cwd
	// are the user's folders ("" is /home/ada and /home/ada/project).
	GOOS, Home, Cwd string
}

func (m *Machine) Build(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range m.Files {
		full := probe.FakeRootFile(root, m.goos(), p)
		if strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`) {
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
	for p, target := range m.Links {
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

func (m *Machine) Probe(t testing.TB) *gpu.Facts {
	t.Helper()
	root := m.Build(t)
	to := m.Timeout
	if to == 0 {
		to = 2 * time.Second
	}
	return probe.Probe(context.Background(), m.Options(root, to))
}

// Options are the probe's options for the machine built at root.
func (m *Machine) Options(root string, timeout time.Duration) probe.Options {
	home, cwd := m.Home, m.Cwd
	if home == "" {
		home = "/home/ada"
	}
	if cwd == "" {
		cwd = "/home/ada/project"
	}
	return probe.Options{
		Root: root, Home: home, Cwd: cwd, Environ: m.Env,
		NVML: m.NVML, Runner: m.Run, Timeout: timeout, GOOS: m.goos(), GOARCH: "amd64", Deep: m.Deep,
		Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) },
	}
}

func (m *Machine) goos() string {
	if m.GOOS == "" {
		return "linux"
	}
	return m.GOOS
}

// MockNVML is a fake NVML (driver, CUDA as 1000*major + 10*minor) with the
// given GPUs, answering as go-nvml's DGX A100 mock does for what the specs
// leave out (no utilisation, temperature, power or clock reasons).
func MockNVML(driver string, cuda int, gpus ...GPUSpec) *nvmlfake.Library {
	devs := make([]*nvmlfake.Device, len(gpus))
	for i, g := range gpus {
		mig := nvml.MIGDisable
		if g.MIGEnabled {
			mig = nvml.MIGEnable
		}
		devs[i] = nvmlfake.NewDevice(nvmlfake.GPU{
			Name: g.Name, UUID: fmt.Sprintf("GPU-%08d-1111-2222-3333-444455556666", i),
			BusID: fmt.Sprintf("00000000:%02X:00.0", i+1), CC: g.CC,
			Memory:  nvml.Memory{Total: g.TotalMiB << 20, Used: g.UsedMiB << 20, Free: (g.TotalMiB - g.UsedMiB) << 20},
			MIGMode: mig, Processes: g.Processes,
		})
	}
	return nvmlfake.New(driver, cuda, devs...)
}

// FailingNVML is an NVML whose Init returns the given code.
func FailingNVML(r nvml.Return) *nvmlfake.Library { return nvmlfake.Failing(r) }

const (
	ProcVersion580 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 10:00:00 UTC 2025\nGCC version:  gcc version 12.2.0\n"
	ProcVersion550 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
	ModulesNvidia  = "nvidia_uvm 1867776 0 - Live 0x0000000000000000 (PO)\nnvidia_drm 118784 2 - Live 0x0000000000000000 (PO)\nnvidia 62783488 21 nvidia_uvm, Live 0x0000000000000000 (PO)\nsnd 126976 0 - Live\n"
	Ldconfig580    = "\t4 libs found in cache `/etc/ld.so.cache'\n\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
)

// BaseMachine is an Ubuntu workstation with one NVIDIA GPU on PCI, the
// driver's module loaded, and a project venv that `python` runs.
func BaseMachine(nv nvml.Library) *Machine {
	return &Machine{
		Files: map[string]string{
			"/etc/os-release":                                       "ID=ubuntu\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
			"/proc/sys/kernel/osrelease":                            "6.8.0-45-generic\n",
			"/proc/modules":                                         ModulesNvidia,
			"/proc/driver/nvidia/version":                           ProcVersion580,
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
		Links: map[string]string{
			"/sys/bus/pci/devices/0000:01:00.0/driver": "../../../bus/pci/drivers/nvidia",
			"/usr/bin/python3":                         "python3.12",
		},
		Env: map[string]string{
			"PATH": "/home/ada/project/.venv/bin:/usr/local/bin:/usr/bin:/bin",
			"HOME": "/home/ada",
		},
		Run:  Runner{"/sbin/ldconfig -p": Ldconfig580},
		NVML: nv,
	}
}

// WithTorch installs torch (and its cuDNN wheel) into a site-packages folder.
func (m *Machine) WithTorch(site, version, cuda string) *Machine {
	m.Files[site+"/torch-"+version+".dist-info/METADATA"] = "Name: torch\nVersion: " + version + "\n"
	cudaLine := "cuda: Optional[str] = None\n"
	if cuda != "" {
		cudaLine = "cuda: Optional[str] = '" + cuda + "'\n"
		major := strings.Split(cuda, ".")[0]
		m.Files[site+"/nvidia_cudnn_cu"+major+"-9.10.2.21.dist-info/METADATA"] = "Name: nvidia-cudnn-cu" + major + "\n"
	}
	m.Files[site+"/torch/version.py"] = "from typing import Optional\n__version__ = '" + version + "'\ndebug = False\n" + cudaLine + "git_version = 'abc'\nhip: Optional[str] = None\n"
	return m
}

// VenvSite is the site-packages of the project venv BaseMachine has.
const VenvSite = "/home/ada/project/.venv/lib/python3.12/site-packages"

// H100 is an idle NVIDIA H100 80GB.
func H100() GPUSpec {
	return GPUSpec{Name: "NVIDIA H100 80GB HBM3", CC: [2]int{9, 0}, TotalMiB: 81559, UsedMiB: 1}
}

// GTX1080 is a Pascal card (compute capability 6.1).
func GTX1080() GPUSpec {
	return GPUSpec{Name: "NVIDIA GeForce GTX 1080", CC: [2]int{6, 1}, TotalMiB: 8192, UsedMiB: 200}
}

// RTX5090 is a Blackwell card (compute capability 12.0).
func RTX5090() GPUSpec {
	return GPUSpec{Name: "NVIDIA GeForce RTX 5090", CC: [2]int{12, 0}, TotalMiB: 32607, UsedMiB: 400}
}
