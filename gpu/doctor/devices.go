package doctor

import (
	"fmt"
	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/internal/plural"
	"sort"
	"strings"
)

func (j *judge) ruleDeviceSelection() {
	f := j.f
	ev, set := f.EnvVar("CUDA_VISIBLE_DEVICES")
	all := f.NVML.GPUs
	if set {
		val := ev.Value
		shown := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", val)
		counts := fmt.Sprintf("NVML sees %s; CUDA will see %d", plural.Count(len(all), "GPU"), len(j.visible))
		switch {
		case len(j.visible) == 0:
			why := "it is set but empty"
			if strings.TrimSpace(val) != "" {
				why = fmt.Sprintf("%q matches no GPU (CUDA stops at the first entry it cannot match)", strings.Split(val, ",")[0])
			}
			if strings.TrimSpace(val) == "-1" {
				why = "-1 hides every GPU (Ultralytics sets it for device=cpu)"
			}
			j.add(gpu.Finding{ID: "cuda_visible_devices_hides_all", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevError,
				Title:    "CUDA_VISIBLE_DEVICES hides every GPU: " + why,
				Evidence: []string{shown, counts},
				Fix: []gpu.Step{{Text: "Unset it in this shell (and look for it in ~/.bashrc, your IDE's run configuration or the script):", Command: "unset CUDA_VISIBLE_DEVICES"},
					{Text: "Or name the GPU to use:", Command: "export CUDA_VISIBLE_DEVICES=0"}}})
		case len(j.visible) < len(strings.Split(val, ",")):
			// The GPUs before the bad entry stay visible: worth fixing,
			// but no reason the GPU is not used.
			j.addWeighted(gpu.Finding{ID: "cuda_visible_devices_invalid_entry", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevWarning,
				Title:    "CUDA_VISIBLE_DEVICES names a GPU that does not exist; CUDA ignores it and every entry after it",
				Evidence: []string{shown, counts},
				Fix:      []gpu.Step{{Text: fmt.Sprintf("Use indices 0 to %d or GPU UUIDs from:", len(all)-1), Command: "nvidia-smi -L"}}}, catalog.Weak)
		case len(j.visible) < len(all):
			var names []string
			for _, g := range j.visible {
				names = append(names, fmt.Sprintf("%d (%s)", g.Index, g.Name))
			}
			j.add(gpu.Finding{ID: "cuda_visible_devices_subset", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevInfo,
				Title:    fmt.Sprintf("CUDA_VISIBLE_DEVICES limits CUDA to %d of %d GPUs", len(j.visible), len(all)),
				Evidence: []string{shown, "visible: " + strings.Join(names, ", ")},
				Fix:      []gpu.Step{{Text: "Inside programs the visible GPUs are renumbered from cuda:0. To use all of them:", Command: "unset CUDA_VISIBLE_DEVICES"}}})
		}
	}
	names := map[string]bool{}
	for _, g := range all {
		names[g.Name] = true
	}
	if order, _ := f.EnvVar("CUDA_DEVICE_ORDER"); len(names) > 1 && order.Value != "PCI_BUS_ID" {
		j.add(gpu.Finding{ID: "cuda_device_order", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevInfo,
			Title:    "Different GPU models: CUDA numbers them fastest first, nvidia-smi by PCI bus",
			Evidence: []string{fmt.Sprintf("%d models: %s", len(names), strings.Join(sortedKeys(names), ", ")), "CUDA_DEVICE_ORDER is not PCI_BUS_ID"},
			Fix:      []gpu.Step{{Text: "Make cuda:N mean the same GPU as nvidia-smi's N:", Command: "export CUDA_DEVICE_ORDER=PCI_BUS_ID"}}})
	}
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (j *judge) ruleMemory() {
	for _, g := range j.visible {
		if g.MemoryTotalMiB == 0 {
			continue
		}
		used := g.MemoryUsedMiB
		var procUsed uint64
		var ev []string
		for _, p := range g.Processes {
			procUsed += p.UsedMiB
			name := p.Name
			if name == "" {
				name = "(not visible here: another container or user)"
			}
			ev = append(ev, fmt.Sprintf("PID %d %s holds %d MiB", p.PID, name, p.UsedMiB))
		}
		used = max(used, procUsed)
		frac := float64(used) / float64(g.MemoryTotalMiB)
		if frac < 0.5 {
			continue
		}
		sev := gpu.SevWarning
		if frac >= 0.9 {
			sev = gpu.SevError
		}
		ev = append([]string{fmt.Sprintf("GPU %d (%s): %d of %d MiB in use (%.0f%%), %d MiB free", g.Index, g.Name, used, g.MemoryTotalMiB, frac*100, g.MemoryTotalMiB-min(used, g.MemoryTotalMiB))}, ev...)
		fix := []gpu.Step{{Text: "See who holds it:", Command: "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"}}
		if len(g.Processes) > 0 {
			fix = append(fix, gpu.Step{Text: "Stop the process if it is yours and no longer needed:", Command: fmt.Sprintf("kill %d", g.Processes[0].PID)})
		}
		if len(j.visible) > 1 {
			fix = append(fix, gpu.Step{Text: "Or train on another GPU:", Command: "export CUDA_VISIBLE_DEVICES=<free GPU index>"})
		}
		fix = append(fix, gpu.Step{Text: "Or lower the batch size (Ultralytics: batch=-1 picks one that fits)."})
		j.add(gpu.Finding{ID: "gpu_memory_in_use", Cause: gpu.CauseOutOfMemory, Severity: sev,
			Title:    fmt.Sprintf("GPU %d memory is %.0f%% taken by other processes", g.Index, frac*100),
			Evidence: ev, Fix: fix})
	}
}

func (j *judge) ruleGPUState() {
	for _, g := range j.visible {
		if g.MIGEnabled != nil && *g.MIGEnabled {
			j.add(gpu.Finding{ID: "mig_enabled", Cause: gpu.CauseDeviceSelection, Severity: gpu.SevInfo,
				Title:    fmt.Sprintf("GPU %d is split into MIG instances", g.Index),
				Evidence: []string{fmt.Sprintf("GPU %d (%s): MIG mode enabled", g.Index, g.Name)},
				Fix: []gpu.Step{{Text: "CUDA sees MIG instances, not the whole GPU; select one by its UUID:", Command: "nvidia-smi -L"},
					{Text: "Then:", Command: "export CUDA_VISIBLE_DEVICES=MIG-<uuid>"}}})
		}
		for _, r := range g.ThrottleReasons {
			if strings.Contains(r, "thermal") || strings.Contains(r, "hardware") {
				j.add(gpu.Finding{ID: "gpu_throttled", Cause: gpu.CauseOther, Severity: gpu.SevWarning,
					Title:    fmt.Sprintf("GPU %d is slowing its clocks (%s)", g.Index, strings.Join(g.ThrottleReasons, ", ")),
					Evidence: []string{fmt.Sprintf("GPU %d (%s): clock event reasons: %s", g.Index, g.Name, strings.Join(g.ThrottleReasons, ", "))},
					Fix:      []gpu.Step{{Text: "Check cooling and power; watch temperature and clocks while training:", Command: "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"}}})
				break
			}
		}
	}
}
