package gpu

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// explainedBy lists, for each error text, the root causes that produce it:
// a report's symptom is shown under its root cause, not beside it.
var explainedBy = map[string][]Cause{
	"invalid_cuda_device":          {CauseCPUOnlyBuild, CauseDriverTooOld, CauseDriverMissing, CauseWSLOrContainer, CauseDeviceSelection},
	"no_cuda_gpus":                 {CauseCPUOnlyBuild, CauseDriverTooOld, CauseDriverMissing, CauseWSLOrContainer, CauseDeviceSelection},
	"torch_not_compiled_with_cuda": {CauseCPUOnlyBuild},
	"no_kernel_image":              {CauseArchUnsupported},
	"sm_not_compatible":            {CauseArchUnsupported},
	"driver_too_old_for_torch":     {CauseDriverTooOld},
	"cuda_driver_insufficient":     {CauseDriverTooOld},
	"ptx_too_new":                  {CauseDriverTooOld},
	"cudnn_status":                 {CauseOutOfMemory, CauseCudnnProblem},
	"cudnn_load":                   {CauseCudnnProblem, CauseTFGPULibs, CauseWSLOrContainer},
	"tf_dlopen":                    {CauseTFGPULibs},
	"nvidia_smi_failed":            {CauseDriverMissing},
	"no_nvidia_driver":             {CauseDriverMissing},
}

// quoteKinds says which report lines prove a finding of each cause.
var quoteKinds = map[Cause][]string{
	CauseCPUOnlyBuild:        {"torch", "device", "cuda_available"},
	CauseDriverTooOld:        {"driver", "torch"},
	CauseArchUnsupported:     {"gpu", "torch"},
	CauseDriverMissing:       {"driver"},
	CauseOutOfMemory:         {"gpu_memory"},
	CauseDeviceSelection:     {"env", "cuda_available"},
	CauseTFGPULibs:           {"tensorflow"},
	CauseConflictingInstalls: {"torch", "python"},
	CauseWSLOrContainer:      {"os"},
}

// judgePaste adds what only a report can tell: its error texts, attached to
// the root cause that explains them or shown on their own, the report's
// lines as evidence, and the commands to run when the report is not enough.
func (j *judge) judgePaste() {
	p := j.f.Paste
	if p == nil {
		return
	}
	tfLog := false
	for _, h := range p.Signatures {
		tfLog = tfLog || h.ID == "tf_dlopen"
	}
	for _, h := range p.Signatures {
		if h.ID == "cudnn_load" && tfLog {
			continue // a line of TensorFlow's library log, judged with it
		}
		if j.explain(h) || h.ID == "tf_dlopen" && j.hasFinding("tf_gpu_libs_missing") {
			continue
		}
		fix := signatureFix(h.ID)
		ev := []string{`report: "` + h.Line + `"`}
		switch h.Cause {
		case CauseDriverTooOld:
			fix = append(j.driverOnlyAdvice(), fix...)
		case CauseArchUnsupported:
			fix = append(j.gpuOnlyAdvice(), fix...)
		case CauseCudnnProblem:
			ev = append(ev, j.cudnnMismatch(h.Line)...)
		}
		j.add(Finding{ID: "report_" + h.ID, Cause: h.Cause, Severity: SevError,
			Title: "The report shows " + h.Title, Evidence: ev, Fix: fix})
	}
	// torch says it sees no GPU, and nothing above says why.
	if p.CUDAAvailable != nil && !*p.CUDAAvailable && !hasSeverity(j.out, SevError) {
		j.add(Finding{ID: "report_cuda_unavailable", Cause: CauseOther, Severity: SevError,
			Title:    "PyTorch sees no GPU, and the report does not say why",
			Evidence: quoteLines(p.Quotes["cuda_available"]),
			Fix:      signatureFix("no_cuda_gpus")})
	}
	if p.DeviceUsed == "cpu" && !hasSeverity(j.out, SevError) {
		j.add(Finding{ID: "report_trains_on_cpu", Cause: CauseDeviceSelection, Severity: SevWarning,
			Title:    "Ultralytics says it ran on the CPU",
			Evidence: quoteLines(p.Quotes["device"]),
			Fix: []Step{{Text: "Ultralytics uses the CPU silently when torch sees no GPU, or when device is not set. Ask for the GPU explicitly (an error then says why it cannot):", Command: "yolo train model=yolov8n.pt data=coco8.yaml device=0"},
				{Text: "And check torch:", Command: nextTorch}}})
	}
	j.runNext()
}

func (j *judge) hasFinding(id string) bool {
	for _, f := range j.out {
		if f.ID == id {
			return true
		}
	}
	return false
}

// explain attaches an error text to a finding whose cause explains it.
func (j *judge) explain(h SignatureHit) bool {
	causes := explainedBy[h.ID]
	if len(causes) == 0 {
		causes = []Cause{h.Cause}
	}
	for _, c := range causes {
		for i := range j.out {
			f := &j.out[i]
			if f.Cause == c && (f.Severity == SevError || f.Severity == SevWarning) && !strings.HasPrefix(f.ID, "report_") {
				line := `the report's error: "` + h.Line + `"`
				if !contains(f.Evidence, line) {
					f.Evidence = append(f.Evidence, line)
				}
				return true
			}
		}
	}
	return false
}

func quoteLines(qs []string) []string {
	var out []string
	for _, q := range qs {
		out = append(out, `report: "`+q+`"`)
	}
	return out
}

// quoteEvidence adds the report's own lines to each finding they prove.
func (j *judge) quoteEvidence() {
	p := j.f.Paste
	if p == nil {
		return
	}
	for i := range j.out {
		f := &j.out[i]
		for _, kind := range quoteKinds[f.Cause] {
			for _, q := range p.Quotes[kind] {
				if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, q) }) {
					f.Evidence = append(f.Evidence, `report: "`+q+`"`)
				}
			}
		}
	}
}

// runNext says which commands would settle what the report leaves open.
func (j *judge) runNext() {
	f, p := j.f, j.f.Paste
	var steps []Step
	var missing []string
	_, hasTorch := j.reportTorch()
	torchInvolved := hasTorch || p.CUDAAvailable != nil || len(p.Signatures) > 0
	if torchInvolved && !j.torchKnown() {
		missing = append(missing, "which PyTorch build runs")
		steps = append(steps, Step{Text: "Which PyTorch build runs, and what it sees:", Command: nextTorch})
	}
	if j.driverVersion() == "" && j.driverCUDA() == "" {
		missing = append(missing, "the driver")
		steps = append(steps, Step{Text: "The driver and the CUDA version it supports, and the GPUs:", Command: nextSMI})
	} else if len(f.NVML.GPUs) == 0 {
		missing = append(missing, "the GPU model")
		steps = append(steps, Step{Text: "The GPUs:", Command: "nvidia-smi -L"})
	}
	if len(missing) == 0 && len(j.out) > 0 {
		return
	}
	recognised := len(p.Formats) > 0 || len(f.Pythons) > 0 || len(f.NVML.GPUs) > 0 || len(p.Signatures) > 0
	if !recognised {
		j.add(Finding{ID: "report_nothing_recognised", Cause: CauseOther, Severity: SevWarning,
			Title:    "The text holds no report this doctor knows (collect_env, nvidia-smi, nvcc, Ultralytics, TensorFlow, a traceback)",
			Evidence: []string{fmt.Sprintf("%d lines read", p.Lines)},
			Fix:      append(steps, Step{Text: "Or, best, run the full check on that machine and paste its output:", Command: nextFull})})
		return
	}
	j.add(Finding{ID: "report_run_next", Cause: CauseOther, Severity: SevInfo,
		Title:    "The report does not show " + strings.Join(missing, " or ") + "; to be sure, run these on that machine",
		Evidence: []string{"recognised in the report: " + recognisedParts(p)},
		Fix:      append(steps, Step{Text: "Or run the full check there:", Command: nextFull})})
}

func (j *judge) reportTorch() (Package, bool) {
	for _, e := range j.f.Pythons {
		if pk, ok := e.Package("torch"); ok {
			return pk, true
		}
	}
	return Package{}, false
}

// torchKnown: the report shows torch's version and whether it is a CUDA build.
func (j *judge) torchKnown() bool {
	pk, ok := j.reportTorch()
	return ok && pk.Version != "(version not shown)" && (pk.CPUOnly || pk.CUDA != "" || pk.ROCm != "")
}

// driverOnlyAdvice names the newest PyTorch wheel a known driver runs when
// the report does not show the GPU (so its architecture is not checked).
func (j *judge) driverOnlyAdvice() []Step {
	q := j.wheelQuery()
	if q.DriverVersion == "" && q.DriverCUDA == "" {
		return nil
	}
	for _, e := range j.f.Pythons {
		q.Python = e.Version
	}
	a := j.m.AdviseTorch(q)
	if !a.OK {
		return nil
	}
	return []Step{{
		Text:    fmt.Sprintf("Without changing the driver (%s): torch %s built for %s runs on it, if it has kernels for your GPU (GTX 10xx and older need cu126 or older builds):", j.driverEvidence(), a.Torch, a.Variant),
		Command: a.PipCommand("python")}}
}

func recognisedParts(p *PasteFacts) string {
	parts := append([]string{}, p.Formats...)
	if len(p.Signatures) > 0 {
		parts = append(parts, "error messages")
	}
	if len(parts) == 0 {
		return "nothing but prose"
	}
	return strings.Join(parts, ", ")
}

// gpuOnlyAdvice names, for each driver generation, the newest wheel with
// kernels for every GPU the report shows, when the driver is unknown.
func (j *judge) gpuOnlyAdvice() []Step {
	var q WheelQuery
	for _, g := range j.f.NVML.GPUs {
		if g.CC != "" {
			q.CCs, q.GPUNames = append(q.CCs, g.CC), append(q.GPUNames, g.Name)
		}
	}
	if len(q.CCs) == 0 || j.driverVersion() != "" || j.driverCUDA() != "" {
		return nil
	}
	q.Windows = j.windows()
	var steps []Step
	seen := map[string]bool{}
	for i := len(j.m.CUDAFamilies) - 1; i >= 0 && len(steps) < 2; i-- {
		fam := j.m.CUDAFamilies[i]
		q.DriverVersion = fam.DriverLinux
		if q.Windows && fam.DriverWindows != "" {
			q.DriverVersion = fam.DriverWindows
		}
		a := j.m.AdviseTorch(q)
		if !a.OK || seen[a.Variant] {
			continue
		}
		seen[a.Variant] = true
		text := fmt.Sprintf("With a driver ≥ %s (see nvidia-smi), torch %s built for %s has kernels for %s:", q.DriverVersion, a.Torch, a.Variant, strings.Join(q.GPUNames, ", "))
		steps = append(steps, Step{Text: text, Command: a.PipCommand("python")})
	}
	return steps
}

var cudnnWantRE = regexp.MustCompile(`libcudnn[a-z_]*\.so\.(\d+)`)

// cudnnMismatch compares the cuDNN a failing program wants with the ones
// the report lists.
func (j *judge) cudnnMismatch(line string) []string {
	m := cudnnWantRE.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	var have []string
	majors := map[string]bool{}
	for _, l := range j.f.CUDA.Libraries {
		if l.Name == "libcudnn" {
			major := strconv.Itoa(MustVersion(l.Version).Major())
			if !majors[major] {
				majors[major] = true
				have = append(have, l.Soname)
			}
		}
	}
	if len(have) == 0 || majors[m[1]] {
		return nil
	}
	return []string{fmt.Sprintf("the program wants cuDNN %s, but the report's library list has only %s: install cuDNN %s beside it (or a build of the program for the cuDNN you have)", m[1], strings.Join(have, ", "), m[1])}
}
