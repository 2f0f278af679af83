package gpu

import (
	"fmt"
	"strings"
)

func (j *judge) wheelQuery() WheelQuery {
	return WheelQuery{DriverVersion: j.driverVersion(), DriverCUDA: j.driverCUDA(), Windows: j.windows()}
}

func (j *judge) driverEvidence() string {
	dv, dc := j.driverVersion(), j.driverCUDA()
	switch {
	case dv != "" && dc != "":
		return fmt.Sprintf("driver %s (runs CUDA ≤ %s)", dv, dc)
	case dv != "":
		return "driver " + dv
	case dc != "":
		return "driver for CUDA " + dc
	}
	return "driver: unknown"
}

func pkgWhere(env PythonEnv, pk Package) string {
	return fmt.Sprintf("%s %s in %s (%s)", pk.Name, pk.Version, env.Interpreter, pk.Location)
}

func buildEvidence(pk Package) string {
	switch {
	case pk.CPUOnly && pk.BuildNote != "":
		return pk.BuildNote + ": no CUDA (CPU-only build)"
	case pk.CUDA != "" && pk.BuildNote != "":
		return pk.BuildNote + ": CUDA " + pk.CUDA
	}
	return ""
}

func (j *judge) ruleFrameworks() {
	gpuHW := j.hasGPUHardware()
	for _, env := range j.f.Pythons {
		inUse := len(env.Commands) > 0 || env.Kind == "paste"
		for _, pk := range env.Packages {
			if pk.Shadowed {
				continue
			}
			switch pk.Name {
			case "torch":
				j.judgeTorch(env, pk, inUse, gpuHW)
			case "tensorflow", "tensorflow-gpu", "tf-nightly", "tensorflow-intel", "tensorflow-cpu":
				j.judgeTF(env, pk, inUse, gpuHW)
			}
		}
	}
}

func sevInUse(inUse bool) Severity {
	if inUse {
		return SevError
	}
	return SevWarning
}

func (j *judge) judgeTorch(env PythonEnv, pk Package, inUse, gpuHW bool) {
	where := pkgWhere(env, pk)
	ev := []string{where}
	if b := buildEvidence(pk); b != "" {
		ev = append(ev, b)
	}
	if len(env.Commands) > 0 {
		ev = append(ev, "runs when you type: "+strings.Join(env.Commands, ", "))
	}
	if pk.ROCm != "" {
		j.add(Finding{ID: "torch_rocm_build", Cause: CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("torch %s in %s is a ROCm (AMD) build: it cannot use an NVIDIA GPU", pk.Version, env.Interpreter),
			Evidence: ev, Fix: j.wheelFix(env)})
		return
	}
	if pk.CPUOnly {
		if !gpuHW {
			j.add(Finding{ID: "torch_cpu_only_no_gpu", Cause: CauseCPUOnlyBuild, Severity: SevInfo,
				Title:    fmt.Sprintf("torch %s in %s is a CPU-only build (right for this machine, which has no NVIDIA GPU)", pk.Version, env.Interpreter),
				Evidence: ev})
			return
		}
		j.add(Finding{ID: "torch_cpu_only", Cause: CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("torch %s in %s is a CPU-only build: it can never use the GPU", pk.Version, env.Interpreter),
			Evidence: ev, Fix: j.wheelFix(env)})
		return
	}
	if pk.CUDA == "" {
		return
	}
	if ok, why := j.m.driverRuns(j.wheelQuery(), pk.CUDA); !ok && (j.driverVersion() != "" || j.driverCUDA() != "") {
		fix := []Step{{Text: fmt.Sprintf("Upgrade the driver to ≥ %s (a driver for CUDA %d):", j.m.FamilyFloor(MustVersion(pk.CUDA).Major(), j.windows()), MustVersion(pk.CUDA).Major())}}
		fix = append(fix, j.driverUpgradeSteps()...)
		fix = append(fix, Step{Text: "Or keep the driver and install a torch it runs:"})
		fix = append(fix, j.wheelFix(env)...)
		j.add(Finding{ID: "driver_too_old_for_torch", Cause: CauseDriverTooOld, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("The driver is too old for torch %s (built for CUDA %s)", pk.Version, pk.CUDA),
			Evidence: append(ev, j.driverEvidence(), why), Fix: fix})
	}
	sass, ptx, archSrc := j.torchArchs(env, pk)
	if archSrc == "" {
		return
	}
	for _, g := range j.visible {
		cc := g.CC
		if cc == "" {
			continue
		}
		c := Covers(sass, ptx, cc, j.driverCUDA(), pk.CUDA)
		gev := append(append([]string{}, ev...), fmt.Sprintf("GPU %d: %s, compute capability %s", g.Index, g.Name, cc), archSrc)
		switch {
		case !c.Covered:
			j.add(Finding{ID: "arch_not_in_torch_build", Cause: CauseArchUnsupported, Severity: sevInUse(inUse),
				Title:    fmt.Sprintf("torch %s has no kernels for GPU %d (%s, compute capability %s)", pk.Version, g.Index, g.Name, cc),
				Evidence: append(gev, c.Reason), Fix: j.wheelFix(env)})
		case c.ViaPTX:
			j.add(Finding{ID: "arch_via_ptx", Cause: CauseArchUnsupported, Severity: SevWarning,
				Title:    fmt.Sprintf("torch %s runs on GPU %d only by JIT-compiling PTX (slow first start, some kernels may be missing)", pk.Version, g.Index),
				Evidence: gev, Fix: j.wheelFix(env)})
		}
	}
	j.judgeTorchCudnn(env, pk, ev)
	j.judgeTorchvision(env, pk)
}

func (j *judge) driverUpgradeSteps() []Step {
	switch j.f.Host.Distro {
	case "ubuntu", "pop", "linuxmint":
		return []Step{{Text: "List the drivers available for this GPU and install the newest recommended one:", Command: "ubuntu-drivers devices && sudo ubuntu-drivers install && sudo reboot"}}
	}
	return j.driverInstallFix()
}

// torchArchs returns the arch list of a torch build: measured by the deep
// check when it ran, else the official wheel's from the matrix.
func (j *judge) torchArchs(env PythonEnv, pk Package) (sass, ptx []string, src string) {
	for _, d := range j.f.Deep {
		if d.Interpreter == env.Interpreter && len(d.ArchList) > 0 {
			sass, ptx = splitArchList(d.ArchList)
			return sass, ptx, "torch.cuda.get_arch_list(): " + strings.Join(d.ArchList, " ")
		}
	}
	if p := j.f.Paste; p != nil && len(p.ArchList) > 0 && env.Interpreter == PasteInterpreter {
		sass, ptx = splitArchList(p.ArchList)
		return sass, ptx, "the report: torch supports " + strings.Join(p.ArchList, " ")
	}
	r, v, ok := j.m.TorchVariant(pk.Version, pk.CUDA)
	if !ok {
		return nil, nil, ""
	}
	src = fmt.Sprintf("official torch %s %s wheels are built for %s", r.Version, v.Name, strings.ReplaceAll(v.Archs, ";", " "))
	if v.PTX != "" {
		src += " (+PTX " + v.PTX + ")"
	}
	return splitArchs(v.Archs), splitArchs(v.PTX), src + " [compat.yaml: " + v.Source + "]"
}

// splitArchList turns torch's arch list ("sm_86", "compute_90") into SASS
// and PTX compute capabilities ("8.6"; "9.0").
func splitArchList(list []string) (sass, ptx []string) {
	for _, a := range list {
		if x := ArchFromSM(a); x != "" {
			if strings.HasPrefix(a, "compute_") {
				ptx = append(ptx, x)
			} else {
				sass = append(sass, x)
			}
		}
	}
	return sass, ptx
}

func (j *judge) judgeTorchCudnn(env PythonEnv, pk Package, ev []string) {
	var systemCudnn []Library
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == "libcudnn" && l.Origin != "header" {
			systemCudnn = append(systemCudnn, l)
		}
	}
	if pk.CuDNN == "" {
		if len(systemCudnn) == 0 && len(j.f.CUDA.Libraries) > 0 {
			j.add(Finding{ID: "torch_without_cudnn", Cause: CauseCudnnProblem, Severity: SevWarning,
				Title:    fmt.Sprintf("No cuDNN found for torch %s: convolution layers will fail", pk.Version),
				Evidence: append(ev, "no nvidia-cudnn wheel in this environment, no libcudnn in torch/lib, none on the loader's path"),
				Fix:      append([]Step{{Text: "Reinstall torch so pip brings its cuDNN wheel:"}}, j.wheelFix(env)...)})
		}
		return
	}
	want := MustVersion(pk.CuDNN).Major()
	for _, l := range systemCudnn {
		if l.Origin != "LD_LIBRARY_PATH" {
			continue
		}
		if have := MustVersion(l.Version).Major(); have > 0 && have != want {
			j.add(Finding{ID: "cudnn_shadowed_by_ld_library_path", Cause: CauseCudnnProblem, Severity: SevWarning,
				Title: fmt.Sprintf("LD_LIBRARY_PATH puts cuDNN %d before the cuDNN %s torch was built with", have, pk.CuDNN),
				Evidence: append(ev, fmt.Sprintf("torch expects cuDNN %s", pk.CuDNN),
					fmt.Sprintf("LD_LIBRARY_PATH: %s (cuDNN %s)", l.Path, l.Version)),
				Fix: []Step{{Text: "Remove that folder from LD_LIBRARY_PATH for training (pip wheels bring their own cuDNN):", Command: "unset LD_LIBRARY_PATH"}}})
			return
		}
	}
}

func (j *judge) judgeTorchvision(env PythonEnv, torch Package) {
	tv, ok := env.Package("torchvision")
	if !ok {
		return
	}
	r, known := j.m.TorchRelease(torch.Version)
	var why string
	switch {
	case tv.CPUOnly && !torch.CPUOnly:
		why = fmt.Sprintf("torchvision %s is a CPU build but torch %s is a CUDA build (torchvision's CUDA ops fail)", tv.Version, torch.Version)
	case tv.CUDA != "" && torch.CUDA != "" && MajorMinor(tv.CUDA) != MajorMinor(torch.CUDA):
		why = fmt.Sprintf("torchvision %s is built for CUDA %s but torch %s for CUDA %s", tv.Version, tv.CUDA, torch.Version, torch.CUDA)
	case known && r.TorchVision != "" && MajorMinor(tv.Version) != r.TorchVision:
		why = fmt.Sprintf("torchvision %s does not pair with torch %s (it wants torchvision %s)", tv.Version, torch.Version, r.TorchVision)
	}
	if why == "" {
		return
	}
	fix := []Step{{Text: "Reinstall the pair from the same index:"}}
	if variant := LocalTag(torch.Version); known && VariantCUDA(variant) != "" {
		fix = []Step{{Text: "Reinstall the pair from the same index:", Command: fmt.Sprintf("%s -m pip install --force-reinstall torch==%s torchvision==%s.* --index-url https://download.pytorch.org/whl/%s", shellQuote(env.Interpreter), torch.Version, r.TorchVision, variant)}}
	} else {
		fix = append(fix, j.wheelFix(env)...)
	}
	j.add(Finding{ID: "torchvision_mismatch", Cause: CauseConflictingInstalls, Severity: SevWarning,
		Title: "torchvision does not match torch in " + env.Interpreter, Evidence: []string{pkgWhere(env, torch), pkgWhere(env, tv), why}, Fix: fix})
}

// hasLib reports whether a library of that major version is visible, in a
// wheel of the environment or to the loader.
func (j *judge) hasLib(env PythonEnv, wheelPrefix, lib string, major int) (bool, string) {
	for _, pk := range env.Packages {
		if strings.HasPrefix(pk.Name, wheelPrefix) && !pk.Shadowed {
			if wheelPrefix == "nvidia-cudnn-cu" && MustVersion(pk.Version).Major() != major {
				continue
			}
			if wheelPrefix == "nvidia-cuda-runtime-cu" && !strings.HasSuffix(pk.Name, fmt.Sprint(major)) {
				continue
			}
			return true, pk.Name + " " + pk.Version
		}
	}
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == lib && MustVersion(l.Version).Major() == major {
			return true, l.Path
		}
	}
	return false, ""
}

func (j *judge) judgeTF(env PythonEnv, pk Package, inUse, gpuHW bool) {
	ev := []string{pkgWhere(env, pk)}
	if b := buildEvidence(pk); b != "" {
		ev = append(ev, b)
	}
	ver := MajorMinor(pk.Version)
	tfFix := []Step{{Text: "Install TensorFlow with its CUDA libraries (Linux and WSL 2):", Command: fmt.Sprintf("%s -m pip install \"tensorflow[and-cuda]==%s.*\"", shellQuote(env.Interpreter), ver)}}
	if j.windows() && VersionAtLeast(pk.Version, "2.11") {
		j.add(Finding{ID: "tf_windows_native_no_gpu", Cause: CauseTFGPULibs, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s has no GPU support on native Windows (2.10 was the last)", pk.Version),
			Evidence: ev,
			Fix: []Step{{Text: "Use TensorFlow inside WSL 2 (recommended):", Command: "wsl --install"},
				{Text: "Or stay on native Windows with TensorFlow 2.10:", Command: `conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0 && python -m pip install "tensorflow<2.11"`}}})
		return
	}
	if !gpuHW {
		return
	}
	if pk.CPUOnly {
		j.add(Finding{ID: "tf_cpu_only", Cause: CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s in %s is a CPU-only build", pk.Version, env.Interpreter),
			Evidence: ev, Fix: tfFix})
		return
	}
	if pk.CUDA == "" {
		return
	}
	if ok, why := j.m.driverRuns(j.wheelQuery(), pk.CUDA); !ok && j.driverVersion() != "" {
		j.add(Finding{ID: "driver_too_old_for_tensorflow", Cause: CauseDriverTooOld, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("The driver is too old for TensorFlow %s (built for CUDA %s)", pk.Version, pk.CUDA),
			Evidence: append(ev, j.driverEvidence(), why), Fix: j.driverUpgradeSteps()})
	}
	var missing []string
	cudaMajor := MustVersion(pk.CUDA).Major()
	if ok, _ := j.hasLib(env, "nvidia-cuda-runtime-cu", "libcudart", cudaMajor); !ok {
		missing = append(missing, fmt.Sprintf("libcudart.so.%d (CUDA %s runtime)", cudaMajor, pk.CUDA))
	}
	if m := MustVersion(pk.CuDNN).Major(); m > 0 {
		if ok, _ := j.hasLib(env, "nvidia-cudnn-cu", "libcudnn", m); !ok {
			missing = append(missing, fmt.Sprintf("libcudnn.so.%d (cuDNN %s)", m, pk.CuDNN))
		}
	}
	if len(missing) > 0 && len(j.f.CUDA.Libraries)+len(env.Packages) > 0 {
		j.add(Finding{ID: "tf_gpu_libs_missing", Cause: CauseTFGPULibs, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("TensorFlow %s cannot find the CUDA libraries it was built for, so it will run on the CPU", pk.Version),
			Evidence: append(ev, "missing: "+strings.Join(missing, ", ")), Fix: tfFix})
	}
}

// ruleInstalls finds several installs and says which one runs.
func (j *judge) ruleInstalls() {
	f := j.f
	primary, hasPrimary := j.primaryPython()
	type tenv struct {
		env PythonEnv
		pk  Package
	}
	var withTorch []tenv
	for _, e := range f.Pythons {
		if pk, ok := e.Package("torch"); ok {
			withTorch = append(withTorch, tenv{e, pk})
		}
		var copies []Package
		for _, pk := range e.Packages {
			if pk.Name == "torch" {
				copies = append(copies, pk)
			}
		}
		if len(copies) > 1 && e.Kind == "paste" {
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
			j.add(Finding{ID: "report_several_torch", Cause: CauseConflictingInstalls, Severity: SevWarning,
				Title:    fmt.Sprintf("The report shows %d different torch installs; make sure the one you run is the CUDA build", len(copies)),
				Evidence: ev,
				Fix:      []Step{{Text: "In the environment you train in, check which torch runs:", Command: `python -c "import sys, torch; print(sys.executable, torch.__version__, torch.version.cuda)"`}}})
		} else if len(copies) > 1 {
			var ev []string
			for i, c := range copies {
				s := fmt.Sprintf("torch %s in %s", c.Version, c.Location)
				if i == 0 {
					s += " (this one is imported)"
				}
				ev = append(ev, s)
			}
			fix := []Step{{Text: "Remove the copy you do not want, e.g. the one in your user site:", Command: shellQuote(e.Interpreter) + " -m pip uninstall torch"}}
			if strings.Contains(copies[0].Location, "/.local/") {
				fix = append(fix, Step{Text: "Or ignore the user site for this run:", Command: "export PYTHONNOUSERSITE=1"})
			}
			j.add(Finding{ID: "torch_installed_twice", Cause: CauseConflictingInstalls, Severity: SevWarning,
				Title: fmt.Sprintf("%s has %d copies of torch; the first on sys.path wins", e.Interpreter, len(copies)), Evidence: ev, Fix: fix})
		}
		cu := map[string]bool{}
		for _, pk := range e.Packages {
			if strings.HasPrefix(pk.Name, "nvidia-") {
				if i := strings.LastIndex(pk.Name, "-cu"); i > 0 {
					cu[pk.Name[i+1:]] = true
				}
			}
		}
		if len(cu) > 1 {
			j.add(Finding{ID: "mixed_nvidia_wheels", Cause: CauseConflictingInstalls, Severity: SevWarning,
				Title:    "NVIDIA library wheels for different CUDA majors are mixed in " + e.Interpreter,
				Evidence: []string{"nvidia-* wheels for: " + strings.Join(sortedKeys(cu), ", ")},
				Fix:      []Step{{Text: "Use a fresh virtual environment for one CUDA major:", Command: "python3 -m venv ~/.venv-gpu"}}})
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
			j.add(Finding{ID: "python_runs_other_env", Cause: CauseConflictingInstalls, Severity: SevWarning,
				Title: fmt.Sprintf("`%s` runs %s, which %s; the CUDA torch is in %s", primary.Commands[0], primary.Interpreter, state, other.env.Interpreter),
				Evidence: []string{fmt.Sprintf("%s → %s (%s)", strings.Join(primary.Commands, ", "), primary.Interpreter, strings.Join(primary.FoundVia, ", ")),
					pkgWhere(other.env, other.pk)},
				Fix: []Step{{Text: "Run your training with that interpreter:", Command: shellQuote(other.env.Interpreter) + " train.py"},
					{Text: "Or activate its environment first (venv/conda), so `python` means it."}}})
		}
	}
	if hasPrimary && len(cudaEnvs) == 0 && len(withTorch) > 0 {
		if _, has := primary.Package("torch"); !has {
			other := withTorch[0]
			j.add(Finding{ID: "python_has_no_torch", Cause: CauseConflictingInstalls, Severity: SevInfo,
				Title: fmt.Sprintf("`%s` runs %s, which has no torch; torch %s is only in %s", primary.Commands[0], primary.Interpreter, other.pk.Version, other.env.Interpreter),
				Evidence: []string{fmt.Sprintf("%s → %s (%s)", strings.Join(primary.Commands, ", "), primary.Interpreter, strings.Join(primary.FoundVia, ", ")),
					pkgWhere(other.env, other.pk)},
				Fix: []Step{{Text: "A script started with `" + primary.Commands[0] + "` cannot import torch; run it with the interpreter that has it:", Command: shellQuote(other.env.Interpreter) + " train.py"}}})
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
			j.add(Finding{ID: "several_torch_installs", Cause: CauseConflictingInstalls, Severity: SevInfo,
				Title:    fmt.Sprintf("%d Python environments have torch, with different builds", len(withTorch)),
				Evidence: ev,
				Fix:      []Step{{Text: "Check which one a command runs before training:", Command: `python -c "import sys, torch; print(sys.executable, torch.__version__, torch.cuda.is_available())"`}}})
		}
	}
	for _, e := range f.Pythons {
		if !contains(e.Commands, "yolo") || (hasPrimary && e.Prefix == primary.Prefix) || !hasPrimary {
			continue
		}
		ypk, _ := e.Package("torch")
		j.add(Finding{ID: "yolo_runs_other_env", Cause: CauseConflictingInstalls, Severity: SevWarning,
			Title: fmt.Sprintf("`yolo` runs %s, not the %s that `%s` runs", e.Interpreter, primary.Interpreter, primary.Commands[0]),
			Evidence: []string{fmt.Sprintf("yolo → %s (%s)", e.Interpreter, strings.Join(e.FoundVia, ", ")),
				fmt.Sprintf("%s → %s", primary.Commands[0], primary.Interpreter), "torch for yolo: " + orUnknown(ypk.Version)},
			Fix: []Step{{Text: "Run Ultralytics through the interpreter you set up:", Command: shellQuote(primary.Interpreter) + " -m ultralytics checks"}}})
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (j *judge) ruleToolkits() {
	dc := j.driverCUDA()
	for _, t := range j.f.CUDA.Toolkits {
		if t.Version == "" || dc == "" {
			continue
		}
		if MustVersion(t.Version).Major() > MustVersion(dc).Major() {
			j.add(Finding{ID: "toolkit_newer_than_driver", Cause: CauseDriverTooOld, Severity: SevWarning,
				Title:    fmt.Sprintf("CUDA toolkit %s is newer than the driver (CUDA %s): programs you compile with it will not run", t.Version, dc),
				Evidence: []string{fmt.Sprintf("toolkit %s at %s", t.Version, t.Path), j.driverEvidence()},
				Fix: append([]Step{{Text: "Framework wheels bring their own CUDA and do not need this toolkit. To compile with it, upgrade the driver:"}},
					j.driverUpgradeSteps()...)})
		}
	}
	for _, n := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if ev, ok := j.f.EnvVar(n); ok && ev.Value != "" {
			found := false
			for _, t := range j.f.CUDA.Toolkits {
				if t.Path == ev.Value || strings.TrimRight(t.Path, "/") == strings.TrimRight(ev.Value, "/") {
					found = true
				}
			}
			if !found && len(j.f.Sources) > 0 && j.f.Origin == "live" {
				j.add(Finding{ID: "cuda_home_invalid", Cause: CauseOther, Severity: SevWarning,
					Title:    n + " points to a folder with no CUDA toolkit",
					Evidence: []string{fmt.Sprintf("%s=%s", n, ev.Value)},
					Fix:      []Step{{Text: "Unset it, or point it at an installed toolkit:", Command: "unset " + n}}})
			}
		}
	}
}

func (j *judge) ruleDeep() {
	for _, d := range j.f.Deep {
		inUse := false
		for _, e := range j.f.Pythons {
			if e.Interpreter == d.Interpreter && len(e.Commands) > 0 {
				inUse = true
			}
		}
		if !d.Ran || d.TimedOut {
			j.add(Finding{ID: "deep_check_failed", Cause: CauseOther, Severity: SevWarning,
				Title:    "The deep check could not run in " + d.Interpreter,
				Evidence: []string{d.Error},
				Fix:      []Step{{Text: "Run it by hand to see the full error:", Command: shellQuote(d.Interpreter) + ` -c "import torch; print(torch.cuda.is_available()); torch.zeros(1).cuda()"`}}})
			continue
		}
		texts := append([]string{d.Error}, d.Warnings...)
		for _, dev := range d.Devices {
			texts = append(texts, dev.Error)
		}
		hits := ClassifyText(strings.Join(texts, "\n"))
		if len(hits) > 0 && !j.hasGPUHardware() {
			j.add(Finding{ID: "deep_no_gpu", Cause: CauseOther, Severity: SevInfo,
				Title:    fmt.Sprintf("PyTorch in %s cannot use a GPU here (expected: this machine has none)", d.Interpreter),
				Evidence: append([]string{"torch " + d.Torch + " (deep check)"}, hitLines(hits)...)})
			continue
		}
		if len(hits) > 0 && j.confirm(d.Interpreter, hits[0].Cause, hitLines(hits)) {
			continue
		}
		if len(hits) > 0 {
			h := hits[0]
			j.add(Finding{ID: "deep_" + h.ID, Cause: h.Cause, Severity: SevError,
				Title:    fmt.Sprintf("PyTorch in %s failed on the GPU: %s", d.Interpreter, h.Title),
				Evidence: append([]string{"torch " + d.Torch + " (deep check)"}, hitLines(hits)...),
				Fix:      j.wheelFix(PythonEnv{Interpreter: d.Interpreter})})
			continue
		}
		if d.CUDAAvailable != nil && !*d.CUDAAvailable {
			j.add(Finding{ID: "deep_cuda_unavailable", Cause: CauseOther, Severity: sevInUse(inUse),
				Title:    fmt.Sprintf("torch.cuda.is_available() is False in %s", d.Interpreter),
				Evidence: []string{"torch " + d.Torch, orUnknown(d.Error)}})
			continue
		}
		for _, dev := range d.Devices {
			if dev.MatmulOK && dev.ConvOK {
				j.add(Finding{ID: "deep_gpu_works", Cause: CauseOther, Severity: SevOK,
					Title:    fmt.Sprintf("torch %s really trained on GPU %d (%s): matmul and cuDNN conv2d forward+backward passed", d.Torch, dev.Index, dev.Name),
					Evidence: []string{fmt.Sprintf("%s: torch %s, CUDA %s, cuDNN %s, arch list %s", d.Interpreter, d.Torch, d.TorchCUDA, d.CuDNN, strings.Join(d.ArchList, " "))}})
			} else if dev.Error == "" {
				j.add(Finding{ID: "deep_gpu_wrong_result", Cause: CauseOther, Severity: SevError,
					Title:    fmt.Sprintf("GPU %d (%s) returned non-finite gradients in the deep check", dev.Index, dev.Name),
					Evidence: []string{fmt.Sprintf("matmul ok=%v conv ok=%v", dev.MatmulOK, dev.ConvOK)},
					Fix:      []Step{{Text: "Test the hardware:", Command: "sudo dcgmi diag -r 2"}}})
			}
		}
	}
}

// confirm adds a deep-check error to the finding that already names the
// same cause for the same interpreter; it reports whether there was one.
func (j *judge) confirm(interp string, c Cause, lines []string) bool {
	for i := range j.out {
		f := &j.out[i]
		if f.Cause != c || f.Severity != SevError || len(f.Evidence) == 0 || !strings.Contains(f.Evidence[0], " in "+interp+" ") {
			continue
		}
		for _, l := range lines {
			f.Evidence = append(f.Evidence, "confirmed by the deep check: "+l)
		}
		return true
	}
	return false
}

func hitLines(hits []SignatureHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Line)
	}
	return out
}

func (j *judge) ruleAdvice() {
	if !j.hasGPUHardware() || !j.adviceOK {
		return
	}
	var ev []string
	ev = append(ev, j.driverEvidence())
	for _, g := range j.f.NVML.GPUs {
		ev = append(ev, fmt.Sprintf("GPU %d: %s, compute capability %s", g.Index, g.Name, g.CC))
	}
	if !j.advice.OK {
		j.add(Finding{ID: "torch_wheel_none", Cause: CauseArchUnsupported, Severity: SevWarning,
			Title: "No official PyTorch wheel runs on every GPU here with this driver", Evidence: append(ev, j.advice.Rejected...),
			Fix: []Step{{Text: "Upgrade the driver, or train on a subset of the GPUs (CUDA_VISIBLE_DEVICES)."}}})
		return
	}
	for _, r := range j.advice.Rejected {
		ev = append(ev, "not newer: "+r)
	}
	py := "python3"
	if e, ok := j.primaryPython(); ok {
		py = e.Interpreter
	}
	if j.f.Origin == "paste" {
		py = "python"
	}
	j.add(Finding{ID: "torch_wheel_advice", Cause: CauseOther, Severity: SevInfo,
		Title:    fmt.Sprintf("The PyTorch for this machine: torch %s built for %s (index %s)", j.advice.Torch, j.advice.Variant, j.advice.IndexURL),
		Evidence: ev,
		Fix:      []Step{{Text: "Install it (in the environment you train in):", Command: j.advice.PipCommand(py)}}})
}

func (j *judge) ruleGPUsOK(driverOK bool) {
	if !driverOK || j.f.Origin == "paste" {
		return // a report cannot prove a GPU works
	}
	for _, g := range j.visible {
		mem := ""
		if g.MemoryTotalMiB > 0 {
			mem = fmt.Sprintf(", %d MiB (%d MiB free)", g.MemoryTotalMiB, g.MemoryFreeMiB)
		}
		j.add(Finding{ID: "gpu_ok", Cause: CauseOther, Severity: SevOK,
			Title:    fmt.Sprintf("GPU %d: %s, compute capability %s%s", g.Index, g.Name, g.CC, mem),
			Evidence: []string{j.driverEvidence(), "UUID " + g.UUID + ", PCI " + g.PCIBusID}})
	}
	any := false
	for _, e := range j.f.Pythons {
		for _, n := range []string{"torch", "tensorflow", "jax"} {
			if _, ok := e.Package(n); ok {
				any = true
			}
		}
	}
	if !any && len(j.visible) > 0 {
		fix := []Step{{Text: "gpuwizard's own trainer uses the GPU without Python. For YOLO or PyTorch, make an environment:", Command: "python3 -m venv ~/.venv-gpu"}}
		if j.advice.OK {
			fix = append(fix, Step{Text: "Install PyTorch for this machine:", Command: j.advice.PipCommand("~/.venv-gpu/bin/python")},
				Step{Text: "And Ultralytics YOLO:", Command: "~/.venv-gpu/bin/python -m pip install ultralytics"})
		}
		j.add(Finding{ID: "no_framework", Cause: CauseOther, Severity: SevInfo,
			Title: "No PyTorch, TensorFlow or JAX found in any Python environment", Evidence: []string{fmt.Sprintf("%d Python environment(s) searched", len(j.f.Pythons))}, Fix: fix})
	}
}
