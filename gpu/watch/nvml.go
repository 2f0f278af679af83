package watch

import (
	"fmt"
	"sync"

	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"

	"gpuwizard/gpu/nvml"
)

// call runs one NVML getter, turning a panic (a mock without the method, a
// symbol missing from an old driver) into NOT_SUPPORTED.
func call[T any](f func() (T, nvml.Return)) (v T, r nvml.Return) {
	defer func() {
		if recover() != nil {
			r = nvml.ErrorNotSupported
		}
	}()
	return f()
}

// device is one NVML reading of one GPU.
type device struct {
	Index       int
	Name        string
	UUID        string
	Util        int  // percent busy over NVML's last sample period
	UtilOK      bool // the GPU reported it
	MemUsedMiB  uint64
	MemTotalMiB uint64
	Procs       map[int]uint64 // compute processes: PID → MiB
	ProcsOK     bool           // the GPU listed its compute processes
}

// gpuReader reads NVML for the watch. NVML starts once; a failure to
// start is an answer (no driver, no GPU), kept and reported every time.
// It is safe for concurrent use.
type gpuReader struct {
	mu      sync.Mutex
	lib     nvml.Library
	started bool
	status  string // a gpu.NVML* status; "" before the first read
	err     string
}

func newGPUReader(lib nvml.Library) *gpuReader {
	return &gpuReader{lib: lib}
}

// read returns NVML's status and every GPU it answers for.
func (g *gpuReader) read() (status, errText string, devs []device) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.status == "" {
		lib := g.lib
		if lib == nil {
			lib = nvml.New()
			g.lib = lib
		}
		r, _ := call(func() (nvml.Return, nvml.Return) { r := lib.Init(); return r, r })
		g.status = probe.NVMLStatus(r)
		if r != nvml.Success {
			g.err = probe.NVMLText(r)
		} else {
			g.started = true
		}
	}
	if !g.started {
		return g.status, g.err, nil
	}
	n, r := call(g.lib.DeviceGetCount)
	if r != nvml.Success {
		return probe.NVMLStatus(r), "counting GPUs: " + probe.NVMLText(r), nil
	}
	for i := 0; i < n; i++ {
		d, r := call(func() (nvml.Device, nvml.Return) { return g.lib.DeviceGetHandleByIndex(i) })
		if r != nvml.Success {
			continue
		}
		devs = append(devs, readDevice(i, d))
	}
	return gpu.NVMLOK, "", devs
}

func readDevice(i int, d nvml.Device) device {
	dv := device{Index: i, Procs: map[int]uint64{}}
	dv.Name, _ = call(d.GetName)
	dv.UUID, _ = call(d.GetUUID)
	if u, r := call(d.GetUtilizationRates); r == nvml.Success {
		dv.Util, dv.UtilOK = int(u.GPU), true
	}
	if m, r := call(d.GetMemoryInfo); r == nvml.Success {
		dv.MemUsedMiB, dv.MemTotalMiB = m.Used>>20, m.Total>>20
	}
	if ps, r := call(d.GetComputeRunningProcesses); r == nvml.Success {
		dv.ProcsOK = true
		for _, p := range ps {
			dv.Procs[int(p.PID)] += p.UsedMiB()
		}
	}
	return dv
}

// close shuts NVML down if read started it.
func (g *gpuReader) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		call(func() (nvml.Return, nvml.Return) { r := g.lib.Shutdown(); return r, r })
		g.started = false
		g.status = ""
	}
}

// label names a GPU for people: "GPU 0 (NVIDIA H100 80GB HBM3)".
func (d device) label() string {
	if d.Name == "" {
		return fmt.Sprintf("GPU %d", d.Index)
	}
	return fmt.Sprintf("GPU %d (%s)", d.Index, d.Name)
}
