package fix

import (
	"fmt"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
)

// KindTF replaces a CPU-only TensorFlow (or one without its CUDA
// libraries) by tensorflow[and-cuda] of the same minor version.
const KindTF = "tensorflow_and_cuda"

// tfFindings are the doctor's findings tensorflow[and-cuda] fixes on Linux.
var tfFindings = map[string]bool{"tf_cpu_only": true, "tf_gpu_libs_missing": true}

// tfPackages are the TensorFlow packages the fix replaces: the first one
// installed gives the version; the CPU and old GPU packages are removed.
var tfPackages = []string{"tensorflow", "tensorflow-cpu", "tensorflow-gpu"}

// tfAndCudaSince is the first release with the and-cuda extra, which
// brings CUDA and cuDNN as pip wheels.
const tfAndCudaSince = "2.14"

// tfWindowsWhy is why TensorFlow is never fixed on native Windows.
const tfWindowsWhy = "TensorFlow 2.11 and later has no GPU build for native Windows, so no package here can fix it: run TensorFlow in WSL 2 (the doctor's steps), where gpuwizard fix can install tensorflow[and-cuda]"

// tfWindowsOldWhy is why TensorFlow 2.10 and older is not fixed on native
// Windows.
const tfWindowsOldWhy = "TensorFlow 2.10 and older on native Windows loads CUDA 11.2 and cuDNN 8.1 from the system (PATH), which gpuwizard does not install: follow the doctor's steps, or run a newer TensorFlow in WSL 2"

// tfNotFixableWhy is why a TensorFlow finding is not fixed on this
// machine, "" when it can be (or is not about TensorFlow).
func tfNotFixableWhy(f *gpu.Facts, id string) string {
	switch {
	case id == "tf_windows_native_no_gpu":
		return tfWindowsWhy
	case tfFindings[id] && f.Host.OS == "windows":
		return tfWindowsOldWhy
	case tfFindings[id] && f.Host.OS != "linux":
		return "tensorflow[and-cuda] is for Linux (and WSL 2) only: follow the doctor's steps"
	}
	return ""
}

// tfAction installs tensorflow[and-cuda] at the installed minor version
// with env's own pip, after removing the CPU and old GPU packages, when the
// driver runs the CUDA that version was built with (the embedded matrix).
func tfAction(f *gpu.Facts, m *compat.Matrix, env gpu.PythonEnv, indexURL string, fs []gpu.Finding) (Action, string) {
	var installed []gpu.Package
	for _, name := range tfPackages {
		if pk, ok := env.Package(name); ok {
			installed = append(installed, pk)
		}
	}
	if len(installed) == 0 || installed[0].Version == "" {
		return Action{}, "the TensorFlow package or its version is unknown here: follow the doctor's steps"
	}
	for _, pk := range installed {
		if by := installer(env, pk.Name); by != "" && by != "pip" && by != "uv" {
			return Action{}, pk.Name + " in this environment was installed by " + by + ", not pip; replacing it with pip would leave " + by + "'s records wrong: remove it with " + by + " first, or use a virtual environment"
		}
	}
	minor := gpu.MajorMinor(installed[0].Version)
	if !gpu.VersionAtLeast(minor, tfAndCudaSince) {
		return Action{}, fmt.Sprintf("TensorFlow %s predates the tensorflow[and-cuda] extra (%s and later), so its CUDA %s must come from a system toolkit, which gpuwizard does not install: upgrade TensorFlow, or follow the doctor's steps", minor, tfAndCudaSince, tfCUDA(m, minor))
	}
	rel, ok := m.TFRelease(minor)
	if !ok {
		return Action{}, "TensorFlow " + minor + " is not in gpuwizard's compatibility table, so the CUDA it needs is unknown: follow the doctor's steps"
	}
	q := compat.WheelQuery{DriverVersion: f.NVML.DriverVersion, DriverCUDA: f.NVML.CUDADriverVersion}
	if q.DriverVersion == "" {
		q.DriverVersion = f.Driver.ModuleVersion
	}
	if q.DriverVersion == "" && q.DriverCUDA == "" {
		return Action{}, "the driver is unknown, so whether it runs TensorFlow " + minor + "'s CUDA " + rel.CUDA + " cannot be told: run gpuwizard doctor where NVML answers"
	}
	if runs, why := m.DriverRuns(q, rel.CUDA); !runs {
		return Action{}, fmt.Sprintf("TensorFlow %s is built for CUDA %s, which this driver does not run (%s): gpuwizard never changes the driver; upgrade it, or install an older TensorFlow by hand", minor, rel.CUDA, why)
	}
	a := Action{Kind: KindTF, Findings: ids(fs), Index: orPyPI(indexURL),
		Why: fmt.Sprintf("tensorflow[and-cuda] %s.* brings the CUDA %s and cuDNN %s libraries TensorFlow %s was built with as pip wheels, and this driver runs CUDA %s", minor, rel.CUDA, rel.CuDNN, minor, rel.CUDA)}
	var remove []string
	for _, pk := range installed {
		a.Remove = append(a.Remove, pk.Name+" "+pk.Version)
		if pk.Name != "tensorflow" {
			remove = append(remove, pk.Name)
		}
	}
	if len(remove) > 0 {
		a.Commands = append(a.Commands, Command{Args: append([]string{env.Interpreter, "-m", "pip", "uninstall", "-y"}, remove...)})
	}
	spec := "tensorflow[and-cuda]==" + minor + ".*"
	a.Install = []string{spec}
	install := []string{env.Interpreter, "-m", "pip", "install", "--force-reinstall", spec}
	if indexURL != "" {
		install = append(install, indexArgs(indexURL)...)
	}
	a.Commands = append(a.Commands, Command{Args: install})
	return a, ""
}

func tfCUDA(m *compat.Matrix, minor string) string {
	if rel, ok := m.TFRelease(minor); ok {
		return rel.CUDA
	}
	return "(unknown)"
}
