package watch

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// useText describes one GPU use for the verdict: "GPU 0 (NVIDIA H100 80GB
// HBM3), 87 % busy, 10240 MiB".
func useText(u GPUUse) string {
	s := fmt.Sprintf("GPU %d", u.Index)
	if u.Name != "" {
		s += " (" + u.Name + ")"
	}
	if u.UtilizationPct != nil {
		s += fmt.Sprintf(", %.0f %% busy", *u.UtilizationPct)
	}
	if u.Seen == SeenNVML {
		if u.ProcessMemoryKnown {
			s += fmt.Sprintf(", %d MiB", u.ProcessMiB)
		} else {
			s += ", its memory not reported"
		}
	}
	return s
}

// judgeOnGPU: the tree is among a GPU's compute processes.
func judgeOnGPU(v *view) verdictOf {
	uses := v.gpuUses()
	var parts, ev []string
	busiest, measured := 0.0, false
	out := verdictOf{onGPU: true, state: StateGPU}
	for _, u := range uses {
		parts = append(parts, useText(u))
		if u.UtilizationPct != nil {
			busiest = max(busiest, *u.UtilizationPct)
			measured = true
		}
		var pids []string
		for _, p := range u.PIDs {
			if v.memNA(u.Index, p) {
				pids = append(pids, fmt.Sprintf("%d (memory not reported)", p))
			} else {
				pids = append(pids, fmt.Sprintf("%d (%d MiB)", p, v.listed[u.Index][p]))
			}
		}
		ev = append(ev, fmt.Sprintf("NVML: PID %s among the compute processes of GPU %d", strings.Join(pids, ", "), u.Index))
		if len(u.UtilHistory) > 0 {
			ev = append(ev, fmt.Sprintf("GPU %d utilisation over the last %s: %s %%", u.Index, v.windowText(), joinInts(u.UtilHistory)))
		}
		if u.MemoryTotalMiB > 0 {
			ev = append(ev, fmt.Sprintf("GPU %d memory: %d of %d MiB in use", u.Index, u.MemoryUsedMiB, u.MemoryTotalMiB))
		}
		out.unseen = append(out.unseen, v.unseenOf(u)...)
	}
	if l, ok := v.libs.first(LibTorchCUDA); ok {
		ev = append(ev, "loaded: "+l.Path)
	} else if l, ok := v.libs.first(LibCUDART); ok {
		ev = append(ev, "loaded: "+l.Path)
	}
	if isPermission(v.id.mapsErr) {
		ev = append(ev, fmt.Sprintf("%s cannot be read (the process belongs to %s): the GPU side comes from NVML alone", v.mapsName(), v.user))
	}
	for _, s := range out.unseen {
		ev = append(ev, "not seen: "+s)
	}
	out.verdict = "On " + strings.Join(parts, "; ")
	ok := gpu.Finding{ID: "watch_on_gpu", Cause: gpu.CauseOther, Severity: gpu.SevOK, Title: "Runs on " + strings.Join(parts, "; "), Evidence: ev}
	switch {
	case measured && busiest < idleUtilPct && v.idle() && len(uses[0].UtilHistory) >= 2:
		out.state = StateIdle
		out.verdict = fmt.Sprintf("Idle on %s: the GPU is %.0f %% busy and the process uses %.0f %% of a core", strings.Join(parts, "; "), busiest, v.cpuMean)
		ok.Title = "Holds GPU memory but does nothing: " + strings.Join(parts, "; ")
		ok.Fix = []gpu.Step{{Text: "A Jupyter kernel between cells or a paused script keeps its GPU memory: free it with del model; torch.cuda.empty_cache(), or end the kernel, when others need the GPU."}}
	case measured && busiest < StarvedUtilPct && len(uses[0].UtilHistory) >= 2:
		if why, bound := v.cpuBound(); bound {
			u := uses[0]
			out.state = StateStarved
			out.verdict = fmt.Sprintf("On GPU %d but starved: %.0f %% busy while %s: data loading is the bottleneck", u.Index, busiest, why)
			out.findings = append(out.findings, v.starvedFinding(u, busiest, why).Finding)
		}
	}
	out.findings = append(out.findings, ok)
	return out
}

// unseenOf lists what NVML could not say about one GPU the tree uses.
func (v *view) unseenOf(u GPUUse) []string {
	var out []string
	if u.Seen == SeenNVML && !u.ProcessMemoryKnown {
		out = append(out, fmt.Sprintf("the process's memory on GPU %d: the driver does not report it per process (%s)", u.Index, v.driverModel()))
	}
	if d, ok := v.device(u.Index); ok && !d.UtilOK {
		why := "NVML: " + d.UtilErr.String()
		if d.MIG {
			why = "not reported in MIG mode"
		}
		out = append(out, fmt.Sprintf("GPU %d's utilisation (%s)", u.Index, why))
	}
	return out
}

// driverModel names why per-process memory is missing: WDDM on Windows
// and under WSL 2.
func (v *view) driverModel() string {
	if v.wsl {
		return "WSL 2, where the Windows driver (WDDM) manages GPU memory"
	}
	return "WDDM: Windows manages GPU memory"
}

// cpuBound says how the tree's CPU side holds the GPU back, if it does:
// the main process at a whole core, the workers each at one, the tree at
// most of its usable cores (the cgroup's limit included), throttled by
// its cgroup, or waiting for a CPU other programs hold.
func (v *view) cpuBound() (string, bool) {
	if !v.cpuOK {
		return "", false
	}
	if v.mainMean >= saturatedMainPct {
		return fmt.Sprintf("the main process keeps a core busy (%.0f %%)", v.mainMean), true
	}
	if n, mean := v.workerCPU(); n > 0 && mean >= saturatedWorkerPct {
		return fmt.Sprintf("its %s are busy (%.0f %% of a core each) and the main process waits for them (%.0f %%)", plural.Count(n, "worker"), mean, v.mainMean), true
	}
	if eff := v.effectiveCores(); eff > 0 && v.cpuMean >= saturatedShare*eff*100 {
		return fmt.Sprintf("the CPU is saturated (%s)", v.cpuText()), true
	}
	if v.thrOK && v.throttledMean >= contendedPct {
		return fmt.Sprintf("its cgroup's CPU limit (%s) throttles it in %.0f %% of periods", coresText(v.limit.Cores), v.throttledMean), true
	}
	if v.waitOK && v.waitMax >= contendedPct {
		return fmt.Sprintf("it waits for a CPU %.0f %% of the time (other programs hold the cores)", v.waitMax), true
	}
	return "", false
}

// effectiveCores is the CPU the tree may use: its affinity, or its
// cgroup's quota when lower.
func (v *view) effectiveCores() float64 {
	eff := float64(v.cores)
	if v.limit.Cores > 0 && (eff == 0 || v.limit.Cores < eff) {
		eff = v.limit.Cores
	}
	return eff
}

func coresText(c float64) string {
	if c == float64(int(c)) {
		return plural.Count(int(c), "core")
	}
	return fmt.Sprintf("%.2g cores", c)
}

func (v *view) cpuText() string {
	s := fmt.Sprintf("%.0f %% of %s, %.0f %% in the main process", v.cpuMean, plural.Count(v.cores, "core"), v.mainMean)
	if v.limit.Cores > 0 {
		s += fmt.Sprintf("; its cgroup may use %s", coresText(v.limit.Cores))
	}
	return s
}

func (v *view) starvedFinding(u GPUUse, util float64, why string) finding {
	workers := min(max(int(v.effectiveCores())-1, 2), 8)
	var fix []gpu.Step
	_, tf := v.framework("tensorflow")
	switch {
	case v.limit.Cores > 0 && (v.thrOK && v.throttledMean >= contendedPct || v.cpuMean >= saturatedShare*v.limit.Cores*100):
		fix = append(fix, gpu.Step{Text: fmt.Sprintf("Its cgroup may use %s (Docker --cpus, a Kubernetes CPU limit): give it more, or use fewer loader workers than that:", coresText(v.limit.Cores)),
			Command: "docker run --cpus=8 ... (Kubernetes: resources.limits.cpu)"})
	case v.waitOK && v.waitMax >= contendedPct:
		fix = append(fix, gpu.Step{Text: "Other programs compete for the CPU: see which with top (sorted by %CPU), stop or renice them, or pin the training to free cores:",
			Command: "top -o %CPU"})
	}
	switch {
	case v.isYOLO():
		fix = append(fix, gpu.Step{Text: "Give the loader more workers and cache the decoded images in memory (or on disk: cache=disk):",
			Command: fmt.Sprintf("yolo train ... workers=%d cache=ram", workers)})
	case tf:
		fix = append(fix, gpu.Step{Text: "Decode and augment in parallel and prefetch the next batches while the GPU works:",
			Command: "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).batch(bs).prefetch(tf.data.AUTOTUNE)"})
	default:
		fix = append(fix, gpu.Step{Text: "Load batches in worker processes, into pinned memory, and keep the workers between epochs:",
			Command: fmt.Sprintf("DataLoader(dataset, batch_size=bs, num_workers=%d, pin_memory=True, persistent_workers=True)", workers)},
			gpu.Step{Text: "Then copy each batch without waiting:", Command: "x = x.to(device, non_blocking=True)"})
	}
	fix = append(fix,
		gpu.Step{Text: "Raise the batch size while GPU memory allows: fewer, larger steps keep the GPU busy longer."},
		gpu.Step{Text: "Decode, resize and normalise images once before training instead of in every epoch (or use smaller images on disk); cheaper augmentations lighten each worker."})
	ev := []string{
		fmt.Sprintf("GPU %d utilisation over the last %s: %s %% (mean %.0f %%)", u.Index, v.windowText(), joinInts(u.UtilHistory), util),
		"CPU: " + v.cpuText(),
	}
	if n, mean := v.workerCPU(); n > 0 {
		ev = append(ev, fmt.Sprintf("workers: %s at %.0f %% of a core on average", plural.Count(n, "worker"), mean))
	}
	if v.thrOK {
		ev = append(ev, fmt.Sprintf("cgroup %s: CPU limit %s, throttled in %.0f %% of periods", v.limit.Path, coresText(v.limit.Cores), v.throttledMean))
	}
	if v.waitOK {
		ev = append(ev, fmt.Sprintf("run queue: the busiest process of the tree waited for a CPU %.0f %% of the time", v.waitMax))
	}
	return finding{Finding: gpu.Finding{ID: "watch_gpu_starved", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
		Title:    fmt.Sprintf("GPU %d is starved: %.0f %% busy while %s, so data loading is the bottleneck", u.Index, util, why),
		Evidence: ev, Fix: fix}, reason: "the GPU waits for data"}
}

// unseen is GPU use that only the tree's device files show.
type unseen struct {
	how  string // "wsl", "wddm", "container", "mig", "no_list"
	gpus []int  // NVML indices of the GPUs whose device files the tree opened
}

// unseenUse finds GPU use NVML cannot attribute: under WSL 2 (no
// per-process data; /dev/dxg), in a container (NVML lists host PIDs this
// /proc cannot show, on a GPU whose device file the tree holds), or on a
// GPU whose processes NVML does not list (MIG without the right to).
func (v *view) unseenUse() (unseen, bool) {
	if !v.libs.has(LibCUDA) && !v.dev.any() {
		return unseen{}, false // CUDA never started: nothing to see
	}
	if v.wsl {
		if !v.dev.has(devDXG) && !v.libs.has(LibCUDA) {
			return unseen{}, false
		}
		u := unseen{how: "wsl"}
		for _, d := range v.last.devs {
			u.gpus = append(u.gpus, d.Index)
		}
		return u, len(u.gpus) > 0
	}
	if !v.devRead {
		// Windows: no device files to read. Under WDDM NVML may list no
		// compute process at all; CUDA open (nvcuda.dll) is all there is.
		u := unseen{how: "wddm"}
		for _, d := range v.last.devs {
			if v.libs.has(LibCUDA) && (!d.ProcsOK || len(d.Procs) == 0) {
				u.gpus = append(u.gpus, d.Index)
			}
		}
		return u, len(u.gpus) > 0
	}
	var u unseen
	for _, d := range v.last.devs {
		if !v.dev.has(fmt.Sprintf("/dev/nvidia%d", v.minor(d))) {
			continue
		}
		how := ""
		switch {
		case !d.ProcsOK && d.MIG:
			how = "mig"
		case !d.ProcsOK:
			how = "no_list"
		case len(v.foreign[d.Index]) > 0 && v.container != "":
			how = "container"
		default:
			continue // NVML lists every process this machine shows, and not this one: no context there
		}
		if u.how == "" {
			u.how = how
		}
		u.gpus = append(u.gpus, d.Index)
	}
	return u, len(u.gpus) > 0
}

// minor is the device-file number of a GPU (/dev/nvidiaN): from the
// driver's table by PCI bus id, else its NVML index.
func (v *view) minor(d device) int {
	if m, ok := v.minors[d.BusID]; ok && d.BusID != "" {
		return m
	}
	return d.Index
}

// judgeUnseen: the tree talks to a GPU NVML cannot name it on. A GPU that
// stays idle while the process works is the CPU; otherwise it is on the
// GPU as far as can be seen, and the report says what could not be.
func judgeUnseen(v *view, u unseen) verdictOf {
	var uses []GPUUse
	busiest, measured := 0.0, false
	for _, i := range u.gpus {
		d, _ := v.device(i)
		g := GPUUse{Index: i, Name: d.Name, MemoryUsedMiB: d.MemUsedMiB, MemoryTotalMiB: d.MemTotalMiB, Seen: SeenDevice}
		if st := v.util(i); st.n > 0 {
			m := round1(st.mean)
			g.UtilizationPct, g.UtilHistory = &m, st.hist
			busiest, measured = max(busiest, m), measured || st.n >= 2
		}
		uses = append(uses, g)
	}
	how, missing := v.unseenWords(u)
	ev := v.unseenEvidence(u, uses)
	switch {
	case measured && busiest < idleUtilPct && v.young():
		return v.settingUp()
	case measured && busiest < idleUtilPct && v.idle():
		return v.idleOff()
	case measured && busiest < idleUtilPct && v.cpuOK && v.cpuMean >= 50:
		f := gpu.Finding{ID: "watch_gpu_unused_unconfirmed", Cause: gpu.CauseDeviceMismatchInCode, Severity: gpu.SevWarning,
			Title:    fmt.Sprintf("CUDA is open, but GPU %d stays %.0f %% busy while the process works on the CPU (%.0f %% of a core): probably the model is not on the GPU (%s)", uses[0].Index, busiest, v.cpuMean, how),
			Evidence: ev, Fix: v.unseenFix(u)}
		return verdictOf{state: StateCPU, verdict: fmt.Sprintf("Probably on the CPU: CUDA is open but GPU %d stays idle while the process works (%s)", uses[0].Index, how),
			findings: []gpu.Finding{f}, unseen: missing}
	}
	var parts []string
	for _, g := range uses {
		parts = append(parts, useText(g))
	}
	f := gpu.Finding{ID: "watch_gpu_unconfirmed", Cause: gpu.CauseOther, Severity: gpu.SevInfo,
		Title:    fmt.Sprintf("On %s as far as can be seen: %s", strings.Join(parts, "; "), how),
		Evidence: ev, Fix: v.unseenFix(u)}
	return verdictOf{onGPU: true, state: StateGPU, verdict: fmt.Sprintf("On %s, as far as can be seen (%s)", strings.Join(parts, "; "), how),
		findings: []gpu.Finding{f}, unseen: missing}
}

// unseenWords says why NVML cannot name the process, and what could not
// be seen.
func (v *view) unseenWords(u unseen) (string, []string) {
	switch u.how {
	case "wsl":
		return "CUDA is open through /dev/dxg; WSL 2 gives no per-process GPU data",
			[]string{"which processes use the GPU, and their memory (WSL 2's driver does not report them)"}
	case "wddm":
		return "CUDA is open (nvcuda.dll loaded); under Windows' WDDM driver NVML lists no compute process",
			[]string{"which processes use the GPU, and their memory (NVML under WDDM lists none)"}
	case "container":
		return fmt.Sprintf("it holds the GPU's device file open; in a container NVML names processes by host PIDs, which this %s cannot match", v.container),
			[]string{"which of the GPU's processes is this one (NVML names them by host PIDs)", "this process's own GPU memory"}
	case "mig":
		return "it holds the GPU's device file open; in MIG mode NVML does not list the processes to this user",
			[]string{"which processes use the GPU (MIG: NVML lists them to root only)", "this process's own GPU memory", "the MIG instance's utilisation"}
	}
	return "it holds the GPU's device file open; NVML does not list this GPU's processes",
		[]string{"which processes use the GPU", "this process's own GPU memory"}
}

func (v *view) unseenEvidence(u unseen, uses []GPUUse) []string {
	var ev []string
	for _, d := range v.dev.evidence() {
		ev = append(ev, "device: "+d)
	}
	if l, ok := v.libs.first(LibCUDA); ok {
		ev = append(ev, "loaded: "+l.Path+": CUDA was initialised")
	}
	for _, g := range uses {
		d, _ := v.device(g.Index)
		s := "NVML: " + d.label()
		if d.MemOK {
			s += fmt.Sprintf(": %d of %d MiB in use", d.MemUsedMiB, d.MemTotalMiB)
		}
		if len(g.UtilHistory) > 0 {
			s += fmt.Sprintf(", utilisation over the last %s: %s %%", v.windowText(), joinInts(g.UtilHistory))
		}
		switch {
		case !d.ProcsOK:
			s += "; its processes are not listed (" + d.ProcsErr.String() + ")"
		case len(v.foreign[g.Index]) > 0:
			var mib uint64
			for _, p := range v.foreign[g.Index] {
				mib += d.Procs[p]
			}
			s += fmt.Sprintf("; it lists %s that this machine's process table does not show (host PIDs %s, %d MiB)", plural.Count(len(v.foreign[g.Index]), "process"), joinPIDs(v.foreign[g.Index]), mib)
		case d.ProcsOK:
			s += fmt.Sprintf("; it lists %s", plural.Count(len(d.Procs), "compute process"))
		}
		ev = append(ev, s)
	}
	if v.wsl {
		ev = append(ev, "WSL 2: NVML gives no per-process data (the Windows driver manages the GPU)")
	}
	if v.container != "" {
		ev = append(ev, "inside a "+v.container+" container")
	}
	return ev
}

func (v *view) unseenFix(u unseen) []gpu.Step {
	check := gpu.Step{Text: "Ask the process itself: print the device of the model and the memory it took:",
		Command: `print(next(model.parameters()).device, torch.cuda.memory_allocated() >> 20, "MiB")`}
	switch u.how {
	case "wsl":
		return []gpu.Step{{Text: "On Windows, nvidia-smi (in PowerShell) or Task Manager → Performance → GPU (the Cuda or Compute graph) shows the GPU's use by process."}, check}
	case "wddm":
		return []gpu.Step{{Text: "Task Manager → Details (add the GPU and dedicated GPU memory columns) or → Performance → GPU (the Cuda or Compute graph) shows the GPU's use by process."}, check}
	case "container":
		return []gpu.Step{{Text: "On the host, list the GPU's processes by host PID and match them to the container's:",
			Command: "nvidia-smi --query-compute-apps=pid,used_memory --format=csv; docker top CONTAINER"},
			{Text: "Or run the container with the host's PIDs (docker run --pid=host), so NVML and /proc agree."}, check}
	case "mig":
		return []gpu.Step{{Text: "As root, nvidia-smi lists the processes of every MIG instance:", Command: "sudo nvidia-smi"}, check}
	}
	return []gpu.Step{check}
}

func joinPIDs(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}
