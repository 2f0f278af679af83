package probe_test

import (
	"context"
	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"
	"strings"
	"testing"

	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

func TestSamplerFindsTheTrainingProcess(t *testing.T) {
	s := nvmlfake.DGXA100()
	const pid = 4242
	for i, dv := range s.Devices {
		d := dv
		i := i
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			if i == 5 {
				return []nvml.ProcessInfo{{PID: 17, UsedGPUMemory: 1 << 30}, {PID: pid, UsedGPUMemory: 900 << 20}}, nvml.Success
			}
			return nil, nvml.Success
		}
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{GPU: uint32(10 * i)}, nvml.Success
		}
		d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{Used: 2 << 30}, nvml.Success }
		d.GetTemperatureFunc = func() (uint32, nvml.Return) { return 61, nvml.Success }
	}
	sm := probe.NewSampler(s)
	defer sm.Close()
	u, err := sm.Sample(context.Background(), pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if u.Index != 5 || !u.ProcessListed || u.ProcessMiB != 900 || u.Utilization != 50 || u.MemoryUsedMiB != 2048 || u.TemperatureC != 61 || !strings.Contains(u.Name, "A100") {
		t.Fatalf("%+v", u)
	}
	// Not listed anywhere (another PID namespace): the fallback device,
	// marked as not listed.
	u, err = sm.Sample(context.Background(), 999, 2)
	if err != nil || u.Index != 2 || u.ProcessListed || u.Utilization != 20 {
		t.Fatalf("%+v %v", u, err)
	}
	if _, err := sm.Sample(context.Background(), 999, 99); err == nil {
		t.Fatal("an unknown fallback device must be an error")
	}
	broken := fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded)
	if _, err := probe.NewSampler(broken).Sample(context.Background(), pid, 0); err == nil || !strings.Contains(err.Error(), "NVML") {
		t.Fatalf("NVML that cannot start: %v", err)
	}
}
