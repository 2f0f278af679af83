package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu/nvml"

	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"
)

func TestHealth(t *testing.T) {
	h100 := func() *fakemachine.Machine {
		return fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100()))
	}
	tests := []struct {
		name    string
		machine func() *fakemachine.Machine
		want    int
		healthy bool
		line    string
	}{
		{"ready", h100, 0, true, "OK: 1× NVIDIA H100 80GB HBM3 through driver 580.95.05"},
		{"a CPU wheel is no reason to drain", func() *fakemachine.Machine {
			return h100().WithTorch(fakemachine.VenvSite, "2.3.0+cpu", "")
		}, 1, true, "OK: 1×"},
		{"fewer GPUs than expected", h100, 2, false, "1 GPUs answer through the driver, 2 expected [gpu_count]"},
		{"a GPU silent on the bus", func() *fakemachine.Machine {
			m := h100()
			m.Files["/sys/bus/pci/devices/0000:02:00.0/vendor"] = "0x10de\n"
			m.Files["/sys/bus/pci/devices/0000:02:00.0/device"] = "0x2330\n"
			m.Files["/sys/bus/pci/devices/0000:02:00.0/class"] = "0x030200\n"
			return m
		}, 0, false, "2 NVIDIA GPUs on the PCI bus, 1 answer through the driver (silent: 0000:02:00.0) [gpu_missing]"},
		{"driver not loaded", func() *fakemachine.Machine {
			m := fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorDriverNotLoaded))
			m.Files["/proc/modules"] = "snd 126976 0 - Live\n"
			delete(m.Files, "/proc/driver/nvidia/version")
			return m
		}, 0, false, "[module_not_loaded]"},
		{"reboot needed", func() *fakemachine.Machine {
			return fakemachine.BaseMachine(fakemachine.FailingNVML(nvml.ErrorLibRMVersionMismatch))
		}, 0, false, "reboot needed) [reboot_needed]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.machine()
			facts := probe.Probe(context.Background(), probe.Options{Root: m.Build(t), Environ: m.Env, NVML: m.NVML,
				Runner: m.Run, GOOS: "linux", GOARCH: "amd64", Only: HealthSources, Timeout: 2 * time.Second})
			var names []string
			for _, s := range facts.Sources {
				names = append(names, s.Name)
			}
			if strings.Join(names, " ") != "nvml pci driver host" || len(facts.Pythons) != 0 {
				t.Fatalf("sources %v, %d Pythons: the health check runs the driver layer only", names, len(facts.Pythons))
			}
			healthy, line := Health(Diagnose(facts, mustMatrix(t)), tt.want)
			if healthy != tt.healthy || !strings.Contains(line, tt.line) || strings.Contains(line, "\n") {
				t.Fatalf("healthy %v %q, want %v with %q", healthy, line, tt.healthy, tt.line)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("é", 150) + "\nnext\x1b[31m"
	s := oneLine(long)
	if len(s) > 200 || strings.ContainsAny(s, "\n\x1b") || !strings.HasSuffix(s, "...") {
		t.Fatalf("%d bytes: %q", len(s), s)
	}
}
