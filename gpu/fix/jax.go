package fix

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
)

// KindJAX adds JAX's CUDA plugin (jax[cuda12] or jax[cuda13]) to a
// CPU-only JAX, at the installed version.
const KindJAX = "jax_cuda"

// jaxFinding is the doctor's finding of a CPU-only jaxlib.
const jaxFinding = "jaxlib_cpu_only"

// jaxCUDAExtraSince is the first JAX whose jax[cuda12] extra installs the
// CUDA plugin from PyPI (older ones needed Google's own index).
const jaxCUDAExtraSince = "0.4.26"

// jaxCUDA13Since is a JAX that surely has the jax[cuda13] extra: an older
// JAX gets jax[cuda12] even on a CUDA 13 driver, which runs CUDA 12 builds
// too (a missing extra is only a warning to pip, and would leave JAX on the
// CPU).
const jaxCUDA13Since = "0.8.0"

// jaxNotFixableWhy is why the CPU-only JAX is not fixed on this machine.
func jaxNotFixableWhy(f *gpu.Facts, id string) string {
	switch {
	case id != jaxFinding:
		return ""
	case f.Host.OS == "windows":
		return "JAX has no CUDA build for native Windows: run it in WSL 2, where gpuwizard fix can install jax[cuda12]"
	case f.Host.OS != "linux":
		return "JAX's CUDA wheels are for Linux (and WSL 2) only: follow the doctor's steps"
	}
	return ""
}

// jaxAction installs jax[cudaNN] at the installed JAX version with env's
// own pip, NN the newest CUDA major the driver runs (13, else 12; 13 only
// for a JAX that has that extra).
func jaxAction(f *gpu.Facts, m *compat.Matrix, env gpu.PythonEnv, indexURL string, fs []gpu.Finding) (Action, string) {
	pk, ok := env.Package("jax")
	if !ok {
		pk, ok = env.Package("jaxlib")
	}
	if !ok || pk.Version == "" {
		return Action{}, "the JAX version here is unknown: follow the doctor's steps"
	}
	for _, name := range []string{"jax", "jaxlib"} {
		if by := installer(env, name); by != "" && by != "pip" && by != "uv" {
			return Action{}, name + " in this environment was installed by " + by + ", not pip; changing it with pip would leave " + by + "'s records wrong: use " + by + "'s CUDA build of JAX, or a virtual environment"
		}
	}
	version, _, _ := strings.Cut(pk.Version, "+")
	if !gpu.VersionAtLeast(version, jaxCUDAExtraSince) {
		return Action{}, fmt.Sprintf("JAX %s predates the jax[cuda12] extra on PyPI (%s and later): upgrade JAX, or follow the doctor's steps", version, jaxCUDAExtraSince)
	}
	q := compat.WheelQuery{DriverVersion: f.NVML.DriverVersion, DriverCUDA: f.NVML.CUDADriverVersion}
	if q.DriverVersion == "" {
		q.DriverVersion = f.Driver.ModuleVersion
	}
	if q.DriverVersion == "" && q.DriverCUDA == "" {
		return Action{}, "the driver is unknown, so the CUDA plugin JAX needs cannot be chosen: run gpuwizard doctor where NVML answers"
	}
	cuda := ""
	for _, c := range []string{"13", "12"} {
		if c == "13" && !gpu.VersionAtLeast(version, jaxCUDA13Since) {
			continue
		}
		if runs, _ := m.DriverRuns(q, c+".0"); runs {
			cuda = c
			break
		}
	}
	if cuda == "" {
		_, why := m.DriverRuns(q, "12.0")
		return Action{}, "JAX's CUDA wheels need a driver for CUDA 12 or 13 (" + why + "): gpuwizard never changes the driver; upgrade it"
	}
	spec := fmt.Sprintf("jax[cuda%s]==%s", cuda, version)
	a := Action{Kind: KindJAX, Findings: ids(fs), Index: orPyPI(indexURL), Install: []string{spec},
		Why: fmt.Sprintf("jax[cuda%s] adds JAX's CUDA %s plugin and the NVIDIA libraries it loads, at the installed JAX %s; this driver runs CUDA %s", cuda, cuda, version, cuda)}
	args := []string{env.Interpreter, "-m", "pip", "install", spec}
	if indexURL != "" {
		args = append(args, indexArgs(indexURL)...)
	}
	a.Commands = []Command{{Args: args}}
	return a, ""
}
