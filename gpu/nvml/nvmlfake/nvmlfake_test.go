package nvmlfake

import (
	"strings"
	"testing"

	"gpuwizard/gpu/nvml"
)

func TestDGXA100(t *testing.T) {
	l := DGXA100()
	if n, r := l.DeviceGetCount(); n != 8 || r != nvml.Success {
		t.Fatalf("count %d %v", n, r)
	}
	d, _ := l.DeviceGetHandleByIndex(7)
	if name, _ := d.GetName(); name != "Mock NVIDIA A100-SXM4-40GB" {
		t.Errorf("name %q", name)
	}
	if _, r := l.DeviceGetHandleByIndex(8); r != nvml.ErrorInvalidArgument {
		t.Errorf("GPU 8 of 8: %v", r)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "GetUtilizationRatesFunc") {
			t.Errorf("an unset getter should panic naming it, got %v", p)
		}
	}()
	d.GetUtilizationRates()
}

func TestFailing(t *testing.T) {
	if r := Failing(nvml.ErrorDriverNotLoaded).Init(); r != nvml.ErrorDriverNotLoaded {
		t.Errorf("Init: %v", r)
	}
}
