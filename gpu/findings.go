package gpu

// Severity says how much a finding matters.
type Severity string

// Severities, most important first.
const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevInfo    Severity = "info"
	SevOK      Severity = "ok"
)

func (s Severity) Rank() int {
	switch s {
	case SevError:
		return 0
	case SevWarning:
		return 1
	case SevInfo:
		return 2
	}
	return 3
}

// Cause is the root-cause family of a finding (the design notes' vocabulary).
type Cause string

// The causes, in the order a fix should be applied: the driver before the
// wheel, the wheel before device selection.
const (
	CauseDriverMissing        Cause = "driver_missing"
	CauseWSLOrContainer       Cause = "wsl_or_container"
	CauseDriverTooOld         Cause = "driver_too_old"
	CauseCPUOnlyBuild         Cause = "cpu_only_build"
	CauseArchUnsupported      Cause = "arch_unsupported"
	CauseConflictingInstalls  Cause = "conflicting_installs"
	CauseCudnnProblem         Cause = "cudnn_problem"
	CauseTFGPULibs            Cause = "tf_gpu_libs"
	CauseDeviceSelection      Cause = "device_selection"
	CauseOutOfMemory          Cause = "out_of_memory"
	CauseDeviceMismatchInCode Cause = "device_mismatch_in_code"
	CauseOther                Cause = "other"
)

// Causes lists every cause in fix order.
var Causes = []Cause{
	CauseDriverMissing, CauseWSLOrContainer, CauseDriverTooOld, CauseCPUOnlyBuild,
	CauseArchUnsupported, CauseConflictingInstalls, CauseCudnnProblem, CauseTFGPULibs,
	CauseDeviceSelection, CauseOutOfMemory, CauseDeviceMismatchInCode, CauseOther,
}

func (c Cause) Rank() int {
	for i, x := range Causes {
		if x == c {
			return i
		}
	}
	return len(Causes)
}

// Step is one step of a fix: what to do, and the exact command when there is one.
type Step struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

// Finding is one judgement about the machine.
type Finding struct {
	ID       string   `json:"id"`
	Cause    Cause    `json:"cause"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence,omitempty"`
	Fix      []Step   `json:"fix,omitempty"`
}

// Report is the doctor's answer: the verdict, the findings most important
// first, and the facts they were drawn from.
type Report struct {
	Ready    bool      `json:"ready"`
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`
	Facts    *Facts    `json:"facts"`
}

// DriverReady says whether a program of its own (gpuwizard's trainer, which
// needs only the driver, not a Python framework) could use a GPU: the driver
// answers and CUDA would see a GPU. When not, reason is the doctor's most
// important finding about the driver layer.
func (r Report) DriverReady() (ready bool, gpuName, reason string) {
	f := r.Facts
	for _, fd := range r.Findings {
		if fd.Severity != SevError {
			continue
		}
		switch fd.Cause {
		case CauseDriverMissing, CauseWSLOrContainer, CauseDeviceSelection, CauseOther:
			if fd.ID != "deep_gpu_wrong_result" {
				return false, "", fd.Title + " (gpuwizard doctor: " + fd.ID + ")"
			}
		}
	}
	if f == nil || f.NVML.Status != NVMLOK || len(f.NVML.GPUs) == 0 {
		return false, "", "no GPU answered through NVML (run gpuwizard doctor)"
	}
	return true, f.NVML.GPUs[0].Name, ""
}
