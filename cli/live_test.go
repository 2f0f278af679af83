package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu/nvml/nvmlfake"

	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"
)

// On nvmlfake's DGX A100 the trainer's device status names all 8 GPUs,
// so a device list can offer each of them.
func TestDeviceStatusListsEveryGPU(t *testing.T) {
	facts := probe.Probe(context.Background(), probe.Options{
		Root: t.TempDir(), NVML: nvmlfake.DGXA100(), Timeout: time.Second, GOOS: "linux", GOARCH: "amd64",
		Runner: noCommands{},
	})
	st := DeviceStatus(gpu.Report{Facts: facts})
	if len(st.GPUs) != 8 {
		t.Fatalf("%d GPUs: %v", len(st.GPUs), st.GPUs)
	}
	for _, g := range st.GPUs {
		if !strings.Contains(g, "A100") || !strings.Contains(g, "GiB") {
			t.Errorf("GPU named %q", g)
		}
	}
}
