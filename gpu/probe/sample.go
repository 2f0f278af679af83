package probe

import (
	"context"
	"fmt"
	"sync"

	"gpuwizard/gpu/nvml"
	"gpuwizard/internal/plural"
)

// Usage is one NVML reading of the GPU a process trains on: the proof
// that the work really runs there.
type Usage struct {
	Index         int    // NVML index of the device read
	Name          string // its name
	Utilization   int    // percent busy over NVML's last sample period
	MemoryUsedMiB int    // on the whole device
	ProcessListed bool   // the process is among the device's compute processes
	ProcessMiB    int    // its memory there, when NVML reports it
	TemperatureC  int
}

// Sampler reads NVML while training runs. It initialises NVML on first
// use and is safe for one goroutine at a time.
type Sampler struct {
	mu   sync.Mutex
	lib  nvml.Library
	init bool
}

// NewSampler returns a sampler over lib (nil: the real NVML).
func NewSampler(lib nvml.Library) *Sampler {
	if lib == nil {
		lib = nvml.New()
	}
	return &Sampler{lib: lib}
}

// Sample finds the device that lists pid among its compute processes (NVML
// indices and CUDA ordinals can differ) and reads it; when no device lists
// the process (a container with its own PID namespace), it reads the device
// with NVML index fallback.
func (s *Sampler) Sample(ctx context.Context, pid, fallback int) (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return Usage{}, ctx.Err()
	}
	if !s.init {
		r, _ := call(func() (nvml.Return, nvml.Return) { r := s.lib.Init(); return r, r })
		if r != nvml.Success {
			return Usage{}, fmt.Errorf("NVML: %s", nvmlText(r))
		}
		s.init = true
	}
	n, r := call(s.lib.DeviceGetCount)
	if r != nvml.Success {
		return Usage{}, fmt.Errorf("NVML device count: %s", nvmlText(r))
	}
	pick, u := -1, Usage{}
	var dev nvml.Device
	for i := 0; i < n && pick < 0; i++ {
		d, r := call(func() (nvml.Device, nvml.Return) { return s.lib.DeviceGetHandleByIndex(i) })
		if r != nvml.Success {
			continue
		}
		procs, _ := call(d.GetComputeRunningProcesses)
		for _, p := range procs {
			if int(p.PID) == pid {
				pick, dev = i, d
				u.ProcessListed = true
				u.ProcessMiB = int(p.UsedMiB())
				break
			}
		}
	}
	if pick < 0 {
		if fallback < 0 || fallback >= n {
			return Usage{}, fmt.Errorf("NVML lists %s and none runs process %d", plural.Count(n, "device"), pid)
		}
		d, r := call(func() (nvml.Device, nvml.Return) { return s.lib.DeviceGetHandleByIndex(fallback) })
		if r != nvml.Success {
			return Usage{}, fmt.Errorf("NVML device %d: %s", fallback, nvmlText(r))
		}
		pick, dev = fallback, d
	}
	u.Index = pick
	u.Name, _ = call(dev.GetName)
	if ut, r := call(dev.GetUtilizationRates); r == nvml.Success {
		u.Utilization = int(ut.GPU)
	}
	if m, r := call(dev.GetMemoryInfo); r == nvml.Success {
		u.MemoryUsedMiB = int(m.Used >> 20)
	}
	if t, r := call(dev.GetTemperature); r == nvml.Success {
		u.TemperatureC = int(t)
	}
	return u, nil
}

// Close shuts NVML down if Sample started it.
func (s *Sampler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.init {
		call(func() (nvml.Return, nvml.Return) { r := s.lib.Shutdown(); return r, r })
		s.init = false
	}
}
