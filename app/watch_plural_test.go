package app

import (
	"strings"
	"testing"

	"gpuwizard/gpu/watch"
)

// The Watch tab's use line counts in words: "1 thread", never "1 threads".
func TestUseTextCounts(t *testing.T) {
	rep := watch.Report{PID: 7, CPU: watch.CPUUse{Threads: 1, Measured: true, Percent: 50, Cores: 1}, Processes: make([]watch.Process, 2)}
	got := useText(rep)
	for _, want := range []string{"PID 7 and 1 child process", "CPU 50 % (of 1 core)", "1 thread"} {
		if !strings.Contains(got, want) || strings.Contains(got, "1 threads") {
			t.Errorf("use line %q lacks %q", got, want)
		}
	}
}

// A GPU seen through its device file (a container, WSL 2) or whose
// memory the driver does not report (WDDM) says so, never "0 MiB".
func TestUseTextUnseenGPU(t *testing.T) {
	rep := watch.Report{PID: 7, GPUs: []watch.GPUUse{{Index: 0, Seen: watch.SeenDevice}, {Index: 1, Seen: watch.SeenNVML}}}
	got := useText(rep)
	if !strings.Contains(got, "GPU 0: seen through its device file") || !strings.Contains(got, "GPU 1: memory not reported") || strings.Contains(got, "0 MiB") {
		t.Errorf("use line %q", got)
	}
}
