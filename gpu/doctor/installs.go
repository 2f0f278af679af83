package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"strconv"
	"strings"
)

// ruleInstalls finds several installs and says which one runs.
func (j *judge) ruleInstalls() {
	f := j.f
	primary, hasPrimary := j.primaryPython()
	type tenv struct {
		env gpu.PythonEnv
		pk  gpu.Package
	}
	var withTorch []tenv
	for _, e := range f.Pythons {
		if pk, ok := e.Package("torch"); ok {
			withTorch = append(withTorch, tenv{e, pk})
		}
		var copies []gpu.Package
		for _, pk := range e.Packages {
			if pk.Name == "torch" {
				copies = append(copies, pk)
			}
		}
		switch {
		case len(copies) < 2:
		case e.Kind != "paste":
			j.torchInstalledTwice(e, copies)
		case j.reading().quote(torchUpdateRE) == "": // else torch before and after the update the report tells of: one install
			j.severalTorchInReport(copies)
		}
		cu := map[string][]string{}
		for _, pk := range e.Packages {
			if major := wheelCUDAMajor(pk); major != "" && !pk.Shadowed {
				cu["CUDA "+major] = append(cu["CUDA "+major], pk.Name+" "+pk.Version)
			}
		}
		if len(cu) > 1 {
			var ev []string
			for _, k := range sortedKeys(map[string]bool(keysOf(cu))) {
				ev = append(ev, k+": "+strings.Join(cu[k], ", "))
			}
			j.add(gpu.Finding{ID: "mixed_nvidia_wheels", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
				Title:    "NVIDIA library wheels for different CUDA majors are mixed in " + e.Interpreter,
				Evidence: ev,
				Fix:      []gpu.Step{{Text: "Use a fresh virtual environment for one CUDA major:", Command: j.freshVenvCommand()}}})
		}
	}
	var cudaEnvs []tenv
	for _, t := range withTorch {
		if !t.pk.CPUOnly && t.pk.CUDA != "" {
			cudaEnvs = append(cudaEnvs, t)
		}
	}
	if hasPrimary && len(cudaEnvs) > 0 {
		ppk, has := primary.Package("torch")
		if !has || ppk.CPUOnly {
			other := cudaEnvs[0]
			state := "has no torch"
			if has {
				state = "has a CPU-only torch " + ppk.Version
			}
			j.add(gpu.Finding{ID: "python_runs_other_env", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
				Title: fmt.Sprintf("`%s` runs %s, which %s; the CUDA torch is in %s", primary.Commands[0], primary.Interpreter, state, other.env.Interpreter),
				Evidence: []string{fmt.Sprintf("%s → %s (%s)", strings.Join(primary.Commands, ", "), primary.Interpreter, strings.Join(primary.FoundVia, ", ")),
					pkgWhere(other.env, other.pk)},
				Fix: []gpu.Step{{Text: "Run your training with that interpreter:", Command: gpu.CommandWord(other.env.Interpreter) + " train.py"},
					{Text: "Or activate its environment first (venv/conda), so `python` means it."}}})
		}
	}
	if hasPrimary && len(cudaEnvs) == 0 && len(withTorch) > 0 {
		if _, has := primary.Package("torch"); !has {
			other := withTorch[0]
			j.add(gpu.Finding{ID: "python_has_no_torch", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevInfo,
				Title: fmt.Sprintf("`%s` runs %s, which has no torch; torch %s is only in %s", primary.Commands[0], primary.Interpreter, other.pk.Version, other.env.Interpreter),
				Evidence: []string{fmt.Sprintf("%s → %s (%s)", strings.Join(primary.Commands, ", "), primary.Interpreter, strings.Join(primary.FoundVia, ", ")),
					pkgWhere(other.env, other.pk)},
				Fix: []gpu.Step{{Text: "A script started with `" + primary.Commands[0] + "` cannot import torch; run it with the interpreter that has it:", Command: gpu.CommandWord(other.env.Interpreter) + " train.py"}}})
		}
	}
	if len(withTorch) > 1 {
		var ev []string
		builds := map[string]bool{}
		for _, t := range withTorch {
			b := "CUDA " + t.pk.CUDA
			if t.pk.CPUOnly {
				b = "CPU-only"
			}
			builds[b] = true
			run := ""
			if len(t.env.Commands) > 0 {
				run = " ← " + strings.Join(t.env.Commands, ", ")
			}
			ev = append(ev, fmt.Sprintf("%s: torch %s (%s)%s", t.env.Interpreter, t.pk.Version, b, run))
		}
		if len(builds) > 1 {
			j.add(gpu.Finding{ID: "several_torch_installs", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevInfo,
				Title:    fmt.Sprintf("%d Python environments have torch, with different builds", len(withTorch)),
				Evidence: ev,
				Fix:      []gpu.Step{{Text: "Check which one a command runs before training:", Command: `python -c "import sys, torch; print(sys.executable, torch.__version__, torch.cuda.is_available())"`}}})
		}
	}
	for _, e := range f.Pythons {
		if !gpu.Contains(e.Commands, "yolo") || (hasPrimary && e.Prefix == primary.Prefix) || !hasPrimary {
			continue
		}
		ypk, _ := e.Package("torch")
		j.add(gpu.Finding{ID: "yolo_runs_other_env", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
			Title: fmt.Sprintf("`yolo` runs %s, not the %s that `%s` runs", e.Interpreter, primary.Interpreter, primary.Commands[0]),
			Evidence: []string{fmt.Sprintf("yolo → %s (%s)", e.Interpreter, strings.Join(e.FoundVia, ", ")),
				fmt.Sprintf("%s → %s", primary.Commands[0], primary.Interpreter), "torch for yolo: " + gpu.OrUnknown(ypk.Version)},
			Fix: []gpu.Step{{Text: "Run Ultralytics through the interpreter you set up:", Command: gpu.CommandWord(primary.Interpreter) + " -m ultralytics checks"}}})
	}
}

// cudaLibWheels are NVIDIA's CUDA library wheels, by name without the
// CUDA suffix. Others named nvidia-* (nvidia-ml-py, nvidia-dali) are not.
var cudaLibWheels = map[string]bool{"cublas": true, "cuda-runtime": true, "cuda-nvrtc": true, "cuda-cupti": true,
	"cuda-nvcc": true, "cudnn": true, "cufft": true, "curand": true, "cusolver": true, "cusparse": true, "cusparselt": true,
	"nccl": true, "nvjitlink": true, "nvtx": true, "cufile": true, "nvshmem": true}

// versionedLikeCUDA are the library wheels whose version is CUDA's own
// (nvidia-cublas 13.1 ships with CUDA 13; cuFFT 12.0 also ships with it).
var versionedLikeCUDA = map[string]bool{"cublas": true, "cuda-runtime": true, "cuda-nvrtc": true, "cuda-cupti": true, "cuda-nvcc": true, "nvjitlink": true}

// wheelCUDAMajor is the CUDA major an NVIDIA library wheel belongs to:
// the -cuNN suffix (nvidia-cudnn-cu12), or for CUDA 13's unsuffixed names
// (nvidia-cublas 13.1.0.3) the version of the libraries that follow CUDA's
// numbering; "" when it cannot be told or the wheel is no CUDA library.
func wheelCUDAMajor(pk gpu.Package) string {
	name, ok := strings.CutPrefix(pk.Name, "nvidia-")
	if !ok {
		return ""
	}
	if i := strings.LastIndex(name, "-cu"); i > 0 {
		if n, err := strconv.Atoi(name[i+3:]); err == nil && cudaLibWheels[name[:i]] {
			return strconv.Itoa(n)
		}
		return ""
	}
	if versionedLikeCUDA[name] {
		if v, ok := gpu.ParseVersion(pk.Version); ok && v.Major() >= 13 {
			return strconv.Itoa(v.Major())
		}
	}
	return ""
}

func keysOf(m map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// severalTorchInReport: a report shows several torch versions at once.
func (j *judge) severalTorchInReport(copies []gpu.Package) {
	var ev []string
	for _, c := range copies {
		b := "build not shown"
		switch {
		case c.CPUOnly:
			b = "CPU-only"
		case c.CUDA != "":
			b = "CUDA " + c.CUDA
		}
		ev = append(ev, fmt.Sprintf("torch %s (%s)", c.Version, b))
	}
	j.add(gpu.Finding{ID: "report_several_torch", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
		Title:    fmt.Sprintf("The report shows %d different torch installs; make sure the one you run is the CUDA build", len(copies)),
		Evidence: ev,
		Fix:      []gpu.Step{{Text: "In the environment you train in, check which torch runs:", Command: `python -c "import sys, torch; print(sys.executable, torch.__version__, torch.version.cuda)"`}}})
}

// torchInstalledTwice: environment e has several copies of torch; the
// first on sys.path wins.
func (j *judge) torchInstalledTwice(e gpu.PythonEnv, copies []gpu.Package) {
	var ev []string
	for i, c := range copies {
		s := fmt.Sprintf("torch %s in %s", c.Version, c.Location)
		if i == 0 {
			s += " (this one is imported)"
		}
		ev = append(ev, s)
	}
	fix := []gpu.Step{{Text: "Remove the copy you do not want, e.g. the one in your user site:", Command: gpu.CommandWord(e.Interpreter) + " -m pip uninstall torch"}}
	if strings.Contains(copies[0].Location, "/.local/") {
		fix = append(fix, gpu.Step{Text: "Or ignore the user site for this run:", Command: "export PYTHONNOUSERSITE=1"})
	}
	j.add(gpu.Finding{ID: "torch_installed_twice", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
		Title: fmt.Sprintf("%s has %d copies of torch; the first on sys.path wins", e.Interpreter, len(copies)), Evidence: ev, Fix: fix})
}
