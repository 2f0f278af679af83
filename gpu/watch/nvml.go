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
	BusID       string // "0000:01:00.0"; "" unknown
	Util        int    // percent busy over NVML's last sample period
	UtilOK      bool   // the GPU reported it
	UtilErr     nvml.Return
	MemUsedMiB  uint64
	MemTotalMiB uint64
	MemOK       bool           // the GPU reported its memory
	MIG         bool           // MIG mode is on
	Procs       map[int]uint64 // compute processes: PID → MiB
	MemNA       map[int]bool   // processes whose memory NVML does not know (WDDM, WSL)
	ProcsOK     bool           // the GPU listed its compute processes
	ProcsErr    nvml.Return    // why it did not
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
	dv := device{Index: i, Procs: map[int]uint64{}, MemNA: map[int]bool{}}
	dv.Name, _ = call(d.GetName)
	dv.UUID, _ = call(d.GetUUID)
	if b, r := call(d.GetPCIBusID); r == nvml.Success && b != "" {
		dv.BusID = normBusID(b)
	}
	var u nvml.Utilization
	if u, dv.UtilErr = call(d.GetUtilizationRates); dv.UtilErr == nvml.Success {
		dv.Util, dv.UtilOK = int(u.GPU), true
	}
	if m, r := call(d.GetMemoryInfo); r == nvml.Success && m.Total != nvml.ValueNotAvailable && m.Total > 0 {
		dv.MemTotalMiB, dv.MemOK = m.Total>>20, m.Used != nvml.ValueNotAvailable
		if dv.MemOK {
			dv.MemUsedMiB = m.Used >> 20
		}
	}
	mig, err := call(func() (int, nvml.Return) { cur, _, r := d.GetMigMode(); return cur, r })
	dv.MIG = err == nvml.Success && mig == nvml.MIGEnable
	var ps []nvml.ProcessInfo
	if ps, dv.ProcsErr = call(d.GetComputeRunningProcesses); dv.ProcsErr == nvml.Success {
		dv.ProcsOK = true
		for _, p := range ps {
			dv.Procs[int(p.PID)] += p.UsedMiB()
			if p.UsedGPUMemory == nvml.ValueNotAvailable {
				dv.MemNA[int(p.PID)] = true
			}
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
