package watch

import (
	"sort"
	"strconv"
	"strings"
)

// GPU device files: what a process holds open or maps tells that it
// talks to the GPU even where NVML cannot name it.
const (
	devCtl = "/dev/nvidiactl"  // the driver's control file: opened by cuInit and NVML
	devUVM = "/dev/nvidia-uvm" // unified memory: opened with a CUDA context
	devDXG = "/dev/dxg"        // WSL 2's GPU (DirectX kernel interface)
)

// isGPUDevice reports whether a file is an NVIDIA or WSL 2 GPU device file.
func isGPUDevice(f string) bool {
	return strings.HasPrefix(f, "/dev/nvidia") || f == devDXG
}

// gpuDevMinor reads N from /dev/nvidiaN, the device file of one GPU.
func gpuDevMinor(f string) (int, bool) {
	s, ok := strings.CutPrefix(f, "/dev/nvidia")
	if !ok || s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// devUse is what the tree's device files say about its GPU use.
type devUse struct {
	opened map[string][]int // device file → PIDs of the tree holding it open
	mapped map[string][]int // device file → PIDs of the tree that mapped it
}

// any reports whether the tree opened or mapped any GPU device file.
func (d devUse) any() bool { return len(d.opened) > 0 || len(d.mapped) > 0 }

// gpuNodes lists the minor numbers of the per-GPU device files the tree
// opened or mapped.
func (d devUse) gpuNodes() []int {
	seen := map[int]bool{}
	var out []int
	for _, m := range []map[string][]int{d.opened, d.mapped} {
		for f := range m {
			if n, ok := gpuDevMinor(f); ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

// has reports whether the tree opened or mapped file.
func (d devUse) has(file string) bool {
	return len(d.opened[file]) > 0 || len(d.mapped[file]) > 0
}

// hasPrefix reports whether the tree opened or mapped a file under prefix.
func (d devUse) hasPrefix(prefix string) bool {
	for _, m := range []map[string][]int{d.opened, d.mapped} {
		for f := range m {
			if strings.HasPrefix(f, prefix) {
				return true
			}
		}
	}
	return false
}

// evidence describes the device files: "/dev/nvidia0 open in PID 4242,
// mapped in PID 4242".
func (d devUse) evidence() []string {
	files := map[string]bool{}
	for _, m := range []map[string][]int{d.opened, d.mapped} {
		for f := range m {
			files[f] = true
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var out []string
	for _, f := range names {
		var how []string
		if p := d.opened[f]; len(p) > 0 {
			how = append(how, "open in PID "+joinPIDs(p))
		}
		if p := d.mapped[f]; len(p) > 0 {
			how = append(how, "mapped in PID "+joinPIDs(p))
		}
		out = append(out, f+" "+strings.Join(how, ", "))
	}
	return out
}

// deviceUse gathers the tree's device files: those its processes hold
// open (this reading) and those mapped into the training process and the
// children whose maps are read.
func (w *Watcher) deviceUse() devUse {
	d := devUse{opened: map[string][]int{}, mapped: map[string][]int{}}
	add := func(m map[string][]int, f string, pid int) {
		for _, p := range m[f] {
			if p == pid {
				return
			}
		}
		m[f] = append(m[f], pid)
	}
	for _, m := range w.last.members {
		for _, f := range m.Devices {
			add(d.opened, f, m.PID)
		}
	}
	for _, f := range w.id.files {
		if isGPUDevice(f) {
			add(d.mapped, f, w.id.pid)
		}
	}
	alive := map[int]bool{}
	for _, m := range w.last.members {
		alive[m.PID] = true
	}
	for pid, ci := range w.children {
		if !alive[pid] || pid == w.id.pid {
			continue
		}
		for _, f := range ci.files {
			if isGPUDevice(f) {
				add(d.mapped, f, pid)
			}
		}
	}
	for _, m := range []map[string][]int{d.opened, d.mapped} {
		for f := range m {
			sort.Ints(m[f])
		}
	}
	return d
}
