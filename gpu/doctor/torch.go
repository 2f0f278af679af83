package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"strings"
)

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

func sevInUse(inUse bool) gpu.Severity {
	if inUse {
		return gpu.SevError
	}
	return gpu.SevWarning
}

func (j *judge) judgeTorch(env gpu.PythonEnv, pk gpu.Package, inUse, gpuHW bool) {
	where := pkgWhere(env, pk)
	ev := []string{where}
	if b := buildEvidence(pk); b != "" {
		ev = append(ev, b)
	}
	if len(env.Commands) > 0 {
		ev = append(ev, "runs when you type: "+strings.Join(env.Commands, ", "))
	}
	if pk.ROCm != "" {
		j.add(gpu.Finding{ID: "torch_rocm_build", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("torch %s in %s is a ROCm (AMD) build: it cannot use an NVIDIA GPU", pk.Version, env.Interpreter),
			Evidence: ev, Fix: j.wheelFix(env)})
		return
	}
	if pk.CPUOnly {
		if !gpuHW {
			j.add(gpu.Finding{ID: "torch_cpu_only_no_gpu", Cause: gpu.CauseCPUOnlyBuild, Severity: gpu.SevInfo,
				Title:    fmt.Sprintf("torch %s in %s is a CPU-only build (right for this machine, which has no NVIDIA GPU)", pk.Version, env.Interpreter),
				Evidence: ev})
			return
		}
		title, ev := j.windowsCPUTorch(pk, fmt.Sprintf("torch %s in %s is a CPU-only build: it can never use the GPU", pk.Version, env.Interpreter), ev)
		j.add(gpu.Finding{ID: "torch_cpu_only", Cause: gpu.CauseCPUOnlyBuild, Severity: sevInUse(inUse),
			Title: title, Evidence: ev, Fix: j.wheelFix(env)})
		return
	}
	if pk.CUDA == "" {
		return
	}
	if ok, why := j.m.DriverRuns(j.wheelQuery(), pk.CUDA); !ok && (j.driverVersion() != "" || j.driverCUDA() != "") {
		fix := []gpu.Step{{Text: fmt.Sprintf("Upgrade the driver to ≥ %s (a driver for CUDA %d):", j.m.FamilyFloor(gpu.MustVersion(pk.CUDA).Major(), j.windows()), gpu.MustVersion(pk.CUDA).Major())}}
		fix = append(fix, j.driverUpgradeSteps()...)
		fix = append(fix, gpu.Step{Text: "Or keep the driver and install a torch it runs:"})
		fix = append(fix, j.wheelFix(env)...)
		j.add(gpu.Finding{ID: "driver_too_old_for_torch", Cause: gpu.CauseDriverTooOld, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("The driver is too old for torch %s (built for CUDA %s)", pk.Version, pk.CUDA),
			Evidence: append(ev, j.driverEvidence(), why), Fix: fix})
	}
	sass, ptx, archSrc := j.torchArchs(env, pk)
	if archSrc == "" {
		j.judgeBuildRange(env, pk, "torch", inUse, ev)
		j.judgeTorchCudnn(env, pk, ev)
		j.judgeTorchvision(env, pk)
		return
	}
	for _, g := range j.visible {
		cc := g.CC
		if cc == "" {
			continue
		}
		c := compat.Covers(sass, ptx, cc, j.driverCUDA(), pk.CUDA)
		gev := append(append([]string{}, ev...), fmt.Sprintf("GPU %d: %s, compute capability %s", g.Index, g.Name, cc), archSrc)
		switch {
		case !c.Covered:
			j.add(gpu.Finding{ID: "arch_not_in_torch_build", Cause: gpu.CauseArchUnsupported, Severity: sevInUse(inUse),
				Title:    fmt.Sprintf("torch %s has no kernels for GPU %d (%s, compute capability %s)", pk.Version, g.Index, g.Name, cc),
				Evidence: append(gev, c.Reason), Fix: j.wheelFix(env)})
		case c.ViaPTX:
			j.add(gpu.Finding{ID: "arch_via_ptx", Cause: gpu.CauseArchUnsupported, Severity: gpu.SevWarning,
				Title:    fmt.Sprintf("torch %s runs on GPU %d only by JIT-compiling PTX (slow first start, some kernels may be missing)", pk.Version, g.Index),
				Evidence: gev, Fix: j.wheelFix(env)})
		}
	}
	j.judgeTorchCudnn(env, pk, ev)
	j.judgeTorchvision(env, pk)
}

// judgeBuildRange judges a build the matrix does not list (an older
// release, another framework) by what its CUDA can build for and the
// oldest GPU the framework's binaries support.
func (j *judge) judgeBuildRange(env gpu.PythonEnv, pk gpu.Package, framework string, inUse bool, ev []string) {
	lo, hi, ok := "", "", false
	if pk.CUDA != "" {
		lo, hi, ok = j.m.BuildRange(pk.CUDA)
	}
	if fmin := j.m.MinCC(framework); fmin != "" && (lo == "" || gpu.VersionAtLeast(fmin, lo)) {
		lo, ok = fmin, true
	}
	if !ok {
		return
	}
	for _, g := range j.visible {
		if g.CC == "" {
			continue
		}
		var why string
		switch {
		case !gpu.VersionAtLeast(g.CC, lo):
			why = fmt.Sprintf("compute capability %s is older than the oldest this build supports (%s)", g.CC, lo)
		case hi != "" && framework == "torch" && gpu.MustVersion(g.CC).Compare(gpu.MustVersion(hi)) > 0:
			why = fmt.Sprintf("CUDA %s cannot build kernels for compute capability %s (newest: %s); a build for a newer CUDA is needed", pk.CUDA, g.CC, hi)
		default:
			continue
		}
		j.add(gpu.Finding{ID: "arch_outside_build", Cause: gpu.CauseArchUnsupported, Severity: sevInUse(inUse),
			Title:    fmt.Sprintf("%s %s has no kernels for GPU %d (%s, compute capability %s)", pk.Name, pk.Version, g.Index, g.Name, g.CC),
			Evidence: append(append([]string{}, ev...), fmt.Sprintf("GPU %d: %s, compute capability %s", g.Index, g.Name, g.CC), why),
			Fix:      j.wheelFix(env)})
	}
}

func (j *judge) driverUpgradeSteps() []gpu.Step {
	switch j.f.Host.Distro {
	case "ubuntu", "pop", "linuxmint":
		return []gpu.Step{{Text: "List the drivers available for this GPU and install the newest recommended one:", Command: "ubuntu-drivers devices && sudo ubuntu-drivers install && sudo reboot"}}
	}
	return j.driverInstallFix()
}

// torchArchs returns the arch list of a torch build: measured by the deep
// check when it ran, else the official wheel's from the matrix.
func (j *judge) torchArchs(env gpu.PythonEnv, pk gpu.Package) (sass, ptx []string, src string) {
	for _, d := range j.f.Deep {
		if d.Interpreter == env.Interpreter && len(d.ArchList) > 0 {
			sass, ptx = splitArchList(d.ArchList)
			return sass, ptx, "torch.cuda.get_arch_list(): " + strings.Join(d.ArchList, " ")
		}
	}
	if p := j.f.Paste; p != nil && len(p.ArchList) > 0 && env.Interpreter == gpu.PasteInterpreter {
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
	return compat.SplitArchs(v.Archs), compat.SplitArchs(v.PTX), src + " [compat.yaml: " + v.Source + "]"
}

// splitArchList turns torch's arch list ("sm_86", "compute_90") into SASS
// and PTX compute capabilities ("8.6"; "9.0").
func splitArchList(list []string) (sass, ptx []string) {
	for _, a := range list {
		if x := gpu.ArchFromSM(a); x != "" {
			if strings.HasPrefix(a, "compute_") {
				ptx = append(ptx, x)
			} else {
				sass = append(sass, x)
			}
		}
	}
	return sass, ptx
}

func (j *judge) judgeTorchCudnn(env gpu.PythonEnv, pk gpu.Package, ev []string) {
	var systemCudnn []gpu.Library
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == "libcudnn" && l.Origin != "header" {
			systemCudnn = append(systemCudnn, l)
		}
	}
	if pk.CuDNN == "" {
		if len(systemCudnn) == 0 && len(j.f.CUDA.Libraries) > 0 {
			j.add(gpu.Finding{ID: "torch_without_cudnn", Cause: gpu.CauseCudnnProblem, Severity: gpu.SevWarning,
				Title:    fmt.Sprintf("No cuDNN found for torch %s: convolution layers will fail", pk.Version),
				Evidence: append(ev, "no nvidia-cudnn wheel in this environment, no libcudnn in torch/lib, none on the loader's path"),
				Fix:      append([]gpu.Step{{Text: "Reinstall torch so pip brings its cuDNN wheel:"}}, j.wheelFix(env)...)})
		}
		return
	}
	want := gpu.MustVersion(pk.CuDNN).Major()
	for _, l := range systemCudnn {
		if l.Origin != "LD_LIBRARY_PATH" {
			continue
		}
		if have := gpu.MustVersion(l.Version).Major(); have > 0 && have != want {
			j.add(gpu.Finding{ID: "cudnn_shadowed_by_ld_library_path", Cause: gpu.CauseCudnnProblem, Severity: gpu.SevWarning,
				Title: fmt.Sprintf("LD_LIBRARY_PATH puts cuDNN %d before the cuDNN %s torch was built with", have, pk.CuDNN),
				Evidence: append(ev, fmt.Sprintf("torch expects cuDNN %s", pk.CuDNN),
					fmt.Sprintf("LD_LIBRARY_PATH: %s (cuDNN %s)", l.Path, l.Version)),
				Fix: []gpu.Step{{Text: "Remove that folder from LD_LIBRARY_PATH for training (pip wheels bring their own cuDNN):", Command: "unset LD_LIBRARY_PATH"}}})
			return
		}
	}
}

func (j *judge) judgeTorchvision(env gpu.PythonEnv, torch gpu.Package) {
	tv, ok := env.Package("torchvision")
	if !ok {
		return
	}
	r, known := j.m.TorchRelease(torch.Version)
	var why string
	switch {
	case tv.CPUOnly && !torch.CPUOnly:
		why = fmt.Sprintf("torchvision %s is a CPU build but torch %s is a CUDA build (torchvision's CUDA ops fail)", tv.Version, torch.Version)
	case tv.CUDA != "" && torch.CUDA != "" && gpu.MajorMinor(tv.CUDA) != gpu.MajorMinor(torch.CUDA):
		why = fmt.Sprintf("torchvision %s is built for CUDA %s but torch %s for CUDA %s", tv.Version, tv.CUDA, torch.Version, torch.CUDA)
	case known && r.TorchVision != "" && gpu.MajorMinor(tv.Version) != r.TorchVision:
		why = fmt.Sprintf("torchvision %s does not pair with torch %s (it wants torchvision %s)", tv.Version, torch.Version, r.TorchVision)
	}
	if why == "" {
		return
	}
	fix := []gpu.Step{{Text: "Reinstall the pair from the same index:"}}
	if variant := gpu.LocalTag(torch.Version); known && gpu.VariantCUDA(variant) != "" {
		fix = []gpu.Step{{Text: "Reinstall the pair from the same index:", Command: fmt.Sprintf("%s -m pip install --force-reinstall torch==%s torchvision==%s.* --index-url https://download.pytorch.org/whl/%s", gpu.CommandWord(env.Interpreter), torch.Version, r.TorchVision, variant)}}
	} else {
		fix = append(fix, j.wheelFix(env)...)
	}
	j.add(gpu.Finding{ID: "torchvision_mismatch", Cause: gpu.CauseConflictingInstalls, Severity: gpu.SevWarning,
		Title: "torchvision does not match torch in " + env.Interpreter, Evidence: []string{pkgWhere(env, torch), pkgWhere(env, tv), why}, Fix: fix})
}
