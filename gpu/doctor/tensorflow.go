package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

// hasLib reports whether a library of that major version is visible, in a
// wheel of the environment or to the loader.
func (j *judge) hasLib(env gpu.PythonEnv, wheelPrefix, lib string, major int) (bool, string) {
	for _, pk := range env.Packages {
		if strings.HasPrefix(pk.Name, wheelPrefix) && !pk.Shadowed {
			if wheelPrefix == "nvidia-cudnn-cu" && gpu.MustVersion(pk.Version).Major() != major {
				continue
			}
			if wheelPrefix == "nvidia-cuda-runtime-cu" && !strings.HasSuffix(pk.Name, fmt.Sprint(major)) {
				continue
			}
			return true, pk.Name + " " + pk.Version
		}
	}
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == lib && gpu.MustVersion(l.Version).Major() == major {
			return true, l.Path
		}
	}
	return false, ""
}

func (j *judge) judgeTF(env gpu.PythonEnv, pk gpu.Package, inUse, gpuHW bool) {
	ev := []string{pkgWhere(env, pk)}
	if b := buildEvidence(pk); b != "" {
		ev = append(ev, b)
	}
	ver := gpu.MajorMinor(pk.Version)
	tfFix := []gpu.Step{{Text: "Install TensorFlow with its CUDA libraries (Linux and WSL 2):", Command: fmt.Sprintf("%s -m pip install \"tensorflow[and-cuda]==%s.*\"", gpu.CommandWord(env.Interpreter), ver)}}
	if j.windows() && gpu.VersionAtLeast(pk.Version, "2.11") {
		j.add(gpu.Finding{ID: "tf_windows_native_no_gpu", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s has no GPU support on native Windows (2.10 was the last)", pk.Version),
			Evidence: ev,
			Fix:      tfWindowsFix(env)})
		return
	}
	if j.f.Windows != nil {
		j.judgeTFWindows(env, pk, inUse, gpuHW) // the DLLs PATH reaches (windows_frameworks.go)
		return
	}
	if !gpuHW {
		return
	}
	if pk.CPUOnly {
		j.add(gpu.Finding{ID: "tf_cpu_only", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s in %s is a CPU-only build", pk.Version, env.Interpreter),
			Evidence: ev, Fix: tfFix})
		return
	}
	if pk.CUDA == "" {
		return
	}
	if ok, why := j.m.DriverRuns(j.wheelQuery(), pk.CUDA); !ok && j.driverVersion() != "" {
		j.add(gpu.Finding{ID: "driver_too_old_for_tensorflow", Cause: gpu.CauseDriverTooOld, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("The driver is too old for TensorFlow %s (built for CUDA %s)", pk.Version, pk.CUDA),
			Evidence: append(ev, j.driverEvidence(), why), Fix: j.driverUpgradeSteps()})
	}
	var missing []string
	cudaMajor := gpu.MustVersion(pk.CUDA).Major()
	if ok, _ := j.hasLib(env, "nvidia-cuda-runtime-cu", "libcudart", cudaMajor); !ok {
		missing = append(missing, fmt.Sprintf("libcudart.so.%d (CUDA %s runtime)", cudaMajor, pk.CUDA))
	}
	if m := gpu.MustVersion(pk.CuDNN).Major(); m > 0 {
		if ok, _ := j.hasLib(env, "nvidia-cudnn-cu", "libcudnn", m); !ok {
			missing = append(missing, fmt.Sprintf("libcudnn.so.%d (cuDNN %s)", m, pk.CuDNN))
		}
	}
	if len(missing) > 0 && len(j.f.CUDA.Libraries)+len(env.Packages) > 0 {
		j.add(gpu.Finding{ID: "tf_gpu_libs_missing", Cause: gpu.CauseTFGPULibs, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s cannot find the CUDA libraries it was built for, so it will run on the CPU", pk.Version),
			Evidence: append(ev, "missing: "+strings.Join(missing, ", ")), Fix: tfFix})
	}
}
