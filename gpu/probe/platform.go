package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

// system is what differs between the operating systems the probe reads:
// their path rules, the sources that read the driver, the host, CUDA and
// the Pythons, and where Pythons keep their packages. Options.GOOS picks
// one (systemFor), so that a Windows machine's fake root is judged from
// Linux tests and the live probe reads the machine it runs on; the rest
// of the probe is shared.
type system interface {
	pathRules
	// environ is the environment as the system names it: Windows reads
	// variable names without case, so they are kept upper case.
	environ(env map[string]string) map[string]string
	// homeVar names the variable that holds the user's home folder.
	homeVar() string
	// envNames are the variables the facts show besides envNames, from
	// the environment (CUDA_PATH_V12_4...).
	envNames(env map[string]string) []string
	// sources are the system's sources besides NVML, which every system has.
	sources(p *prober) []source
	// pythonCandidates lists the interpreters a user may run, in the
	// order a user meets them; the error says what could not be asked.
	pythonCandidates(ctx context.Context, p *prober) ([]candidate, error)
	// describePython finds an interpreter's prefix, kind, version and
	// site-packages folders without running it; false when path is not
	// an interpreter's file.
	describePython(p *prober, path string) (gpu.PythonEnv, bool)
	// torchCuDNN is the version of the cuDNN in a torch's lib folder.
	torchCuDNN(p *prober, torchLib string) string
	// nameProcesses fills the names of the processes NVML lists.
	nameProcesses(p *prober, f *gpu.Facts)
}

// systemFor is the system goos names; env gives Windows its PATHEXT.
func systemFor(goos string, env map[string]string) system {
	if goos == "windows" {
		return windowsSystem{newWindowsRules(envFold(env, "PATHEXT"))}
	}
	return linuxSystem{}
}

// envFold reads a variable without case (Windows' names).
func envFold(env map[string]string, name string) string {
	if v, ok := env[name]; ok {
		return v
	}
	for k, v := range env {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// linuxSystem reads Linux: sysfs, /proc, ldconfig, /usr/local/cuda and
// the Pythons of a Unix home (and, but for its sources, any Unix).
type linuxSystem struct{ posixRules }

func (linuxSystem) environ(env map[string]string) map[string]string { return env }
func (linuxSystem) homeVar() string                                 { return "HOME" }
func (linuxSystem) envNames(map[string]string) []string             { return nil }

func (linuxSystem) sources(p *prober) []source {
	return []source{
		{"pci", p.probePCI},
		{"driver", p.probeDriver},
		{"host", p.probeHost},
		{"cuda_toolkits", p.probeToolkits},
		{"cuda_libraries", p.probeLibraries},
		{"python", p.probePythons},
	}
}

func (linuxSystem) pythonCandidates(_ context.Context, p *prober) ([]candidate, error) {
	return p.linuxPythonCandidates(), nil
}

func (linuxSystem) describePython(p *prober, path string) (gpu.PythonEnv, bool) {
	return p.describeUnixPython(path)
}

func (linuxSystem) torchCuDNN(p *prober, torchLib string) string {
	for _, f := range p.glob(p.sys.join(torchLib, "libcudnn.so*")) {
		if v := gpu.SoVersion(p.sys.base(f)); v != "" {
			return v
		}
	}
	return ""
}

// nameProcesses fills process names from /proc when the PID is visible
// (in a container, NVML reports host PIDs that are not).
func (linuxSystem) nameProcesses(p *prober, f *gpu.Facts) {
	for gi := range f.NVML.GPUs {
		for pi := range f.NVML.GPUs[gi].Processes {
			pr := &f.NVML.GPUs[gi].Processes[pi]
			if b, err := p.readFile(fmt.Sprintf("/proc/%d/comm", pr.PID), capSmall); err == nil {
				pr.Name = strings.TrimSpace(string(b))
			}
		}
	}
}
