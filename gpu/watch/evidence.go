package watch

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// evidence is the flat list of what the verdict rests on.
func (v *view) evidence() []string {
	var ev []string
	for _, l := range v.led {
		ev = append(ev, "led: "+l+": the verdict is about the training's main process and its children")
	}
	ev = append(ev, v.processEvidence()...)
	if kids := v.childrenText(); kids != "" {
		ev = append(ev, "children: "+kids)
	}
	ev = append(ev, v.cpuEvidence())
	ev = append(ev, v.nvmlEvidence()...)
	for _, d := range v.dev.evidence() {
		ev = append(ev, "device: "+d)
	}
	ev = append(ev, v.libraryEvidence()...)
	if e := v.environEvidence(); e != "" {
		ev = append(ev, e)
	}
	if v.interp != nil {
		ev = append(ev, "python: "+v.interp.Interpreter+" ("+v.interpText()+")")
	}
	for i := range ev {
		ev[i] = gpu.Sanitize(ev[i])
	}
	return ev
}

// processEvidence describes the training process: its command, program,
// folder, user and age, and what it ran before an exec.
func (v *view) processEvidence() []string {
	p := fmt.Sprintf("process: PID %d, %s", v.id.pid, strings.Join(v.id.cmdline, " "))
	if len(v.id.cmdline) == 0 {
		p = fmt.Sprintf("process: PID %d, %s", v.id.pid, v.id.comm)
	}
	var extra []string
	if v.id.exe != "" {
		extra = append(extra, "exe "+v.id.exe)
	} else if isPermission(v.id.exeErr) {
		extra = append(extra, "exe: permission denied")
	}
	if v.id.cwd != "" {
		extra = append(extra, "cwd "+v.id.cwd)
	}
	extra = append(extra, "user "+v.user, v.ageText())
	ev := []string{p + " (" + strings.Join(extra, ", ") + ")"}
	if v.id.pid != v.pid {
		ev = append(ev, fmt.Sprintf("watched: PID %d (%s), whose tree holds the training process", v.pid, v.command()))
	}
	if len(v.id.before) > 0 {
		ev = append(ev, fmt.Sprintf("exec: PID %d ran %s before its current program; its command line, environment and libraries are read again after each exec", v.id.pid, strings.Join(v.id.before, ", then ")))
	}
	return ev
}

func (v *view) cpuEvidence() string {
	if !v.cpuOK {
		return fmt.Sprintf("cpu: not measured yet (one reading), %s", plural.Count(v.threads(), "thread"))
	}
	s := fmt.Sprintf("cpu: %.0f %% over the last %s (100 %% is one core; %s), %.0f %% in the main process", v.cpuMean, v.windowText(), plural.Count(v.cores, "core"), v.mainMean)
	if n, mean := v.workerCPU(); n > 0 {
		s += fmt.Sprintf(", %.0f %% in each of %s on average", mean, plural.Count(n, "worker"))
	}
	s += ", " + plural.Count(v.threads(), "thread")
	if v.limit.Cores > 0 {
		s += fmt.Sprintf("; cgroup CPU limit %s", coresText(v.limit.Cores))
		if v.thrOK {
			s += fmt.Sprintf(", throttled in %.0f %% of periods", v.throttledMean)
		}
	}
	if v.waitOK {
		s += fmt.Sprintf("; waits for a CPU up to %.0f %% of the time", v.waitMax)
	}
	return s
}

func (v *view) nvmlEvidence() []string {
	var ev []string
	switch {
	case v.nvml != gpu.NVMLOK:
		s := "nvml: " + v.nvml
		if v.nvmlErr != "" {
			s += " (" + v.nvmlErr + ")"
		}
		return []string{s}
	case len(v.last.devs) == 0:
		return []string{"nvml: no GPU"}
	}
	for _, d := range v.last.devs {
		s := fmt.Sprintf("nvml: %s", d.label())
		if d.MIG {
			s += " in MIG mode"
		}
		if st := v.util(d.Index); st.n > 0 {
			s += fmt.Sprintf(", %.0f %% busy (%s)", st.mean, joinInts(st.hist))
		} else if !d.UtilOK {
			s += ", utilisation not reported (" + d.UtilErr.String() + ")"
		}
		if d.MemOK {
			s += fmt.Sprintf(", %d/%d MiB used", d.MemUsedMiB, d.MemTotalMiB)
		}
		switch {
		case !d.ProcsOK:
			s += ", its processes not listed (" + d.ProcsErr.String() + ")"
		default:
			var mine uint64
			for _, mib := range v.listed[d.Index] {
				mine += mib
			}
			if pids, ok := v.listed[d.Index]; ok {
				s += fmt.Sprintf(", this process tree: %d MiB in %s", mine, plural.Count(len(pids), "process"))
			} else {
				s += fmt.Sprintf(", %s, none of this tree", plural.Count(len(d.Procs), "compute process"))
			}
			if f := v.foreign[d.Index]; len(f) > 0 {
				s += fmt.Sprintf(" (%s not in this machine's process table: host PIDs %s)", plural.Count(len(f), "process"), joinPIDs(f))
			}
		}
		ev = append(ev, s)
	}
	return ev
}

func (v *view) libraryEvidence() []string {
	if isPermission(v.id.mapsErr) && len(v.libs) == 0 {
		return []string{fmt.Sprintf("libraries: %s: permission denied", v.mapsName())}
	}
	if len(v.libs) == 0 {
		return []string{"libraries: none of torch, TensorFlow, JAX or CUDA loaded"}
	}
	var ls []string
	for _, l := range v.libs {
		ls = append(ls, l.Path)
	}
	ev := []string{"libraries: " + strings.Join(ls, ", ")}
	var missing []string
	if v.libs.has(LibTorchCPU) && !v.libs.has(LibTorchCUDA) {
		missing = append(missing, "libtorch_cuda")
	}
	if !v.libs.has(LibCUDA) {
		missing = append(missing, "libcuda (CUDA not initialised)")
	}
	if len(missing) > 0 {
		ev = append(ev, "missing: "+strings.Join(missing, ", "))
	}
	return ev
}

func (v *view) environEvidence() string {
	switch {
	case isPermission(v.id.environErr):
		return "environ: permission denied"
	case v.id.environ == nil:
		return ""
	}
	var es []string
	for _, n := range []string{"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"} {
		if val, ok := v.id.environ[n]; ok {
			es = append(es, fmt.Sprintf("%s=%q", n, val))
		} else {
			es = append(es, n+" unset")
		}
	}
	for _, n := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if val, ok := v.id.environ[n]; ok {
			es = append(es, fmt.Sprintf("%s=%q", n, val))
		}
	}
	return "environ: " + strings.Join(es, ", ")
}

func (v *view) interpText() string {
	var pk []string
	for _, p := range v.interp.Packages {
		if p.Shadowed || strings.HasPrefix(p.Name, "nvidia-") {
			continue
		}
		s := p.Name + " " + p.Version
		switch {
		case p.CPUOnly:
			s += " (CPU-only)"
		case p.CUDA != "":
			s += " (CUDA " + p.CUDA + ")"
		}
		pk = append(pk, s)
	}
	desc := v.interp.Kind + " " + v.interp.Version
	if len(pk) > 0 {
		desc += ": " + strings.Join(pk, ", ")
	}
	return desc
}

// childrenText describes the tree's other processes: "2 workers (4243,
// 4244)", "2 ranks (…)".
func (v *view) childrenText() string {
	if len(v.last.members) <= 1 {
		return ""
	}
	groups := map[string][]string{}
	var order []string
	for _, m := range v.last.members[1:] {
		key := m.Role
		if strings.HasPrefix(key, "rank ") {
			key = "rank"
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		label := strconv.Itoa(m.PID)
		if key == "rank" {
			label += " " + m.Role
		}
		groups[key] = append(groups[key], label)
	}
	sort.Strings(order)
	var parts []string
	for _, k := range order {
		n := len(groups[k])
		name := plural.Count(n, k) // "1 child", "15 children"
		switch k {
		case "worker":
			name = plural.Count(n, "worker") + " (DataLoader or multiprocessing)"
		case "rank":
			name = plural.Count(n, "torchrun rank")
		}
		ids := groups[k]
		if len(ids) > 8 {
			ids = append(ids[:8:8], "…")
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, strings.Join(ids, ", ")))
	}
	text := strings.Join(parts, "; ")
	if len(v.last.members)-1 >= maxTree {
		text += fmt.Sprintf("; watch follows the first %d descendants, and the tree may hold more", maxTree)
	}
	return text
}
