package trainer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpuwizard/trainer/exec"
)

// fakeCUDA is the Go backend dressed as a GPU with a memory limit, so the
// CUDA ladder (open, fitting the batch, out of memory, proof of use) runs
// without a GPU.
type fakeCUDA struct {
	*exec.GoBackend
	limit, used int // floats
	report      int // the limit MemInfo reports (0: limit)
	freed       int // FreeAll calls
	// lazy floats are allocated on the first step's first read of a
	// result (as the CUDA backend grows its scratch space on the first
	// step); grown says they were.
	lazy  int
	grown bool
}

func (f *fakeCUDA) Download(dst []float32, b exec.Buf) error {
	if f.lazy > 0 && !f.grown {
		if f.used+f.lazy > f.limit {
			return fmt.Errorf("%w: scratch space of %d floats: the fake device of %d floats is full", exec.ErrOutOfMemory, f.lazy, f.limit)
		}
		f.used += f.lazy
		f.grown = true
	}
	return f.GoBackend.Download(dst, b)
}

func (f *fakeCUDA) MemInfo() (free, total uint64, err error) {
	lim := f.limit
	if f.report > 0 {
		lim = f.report
	}
	return uint64(4 * (lim - f.used)), uint64(4 * lim), nil
}

func (f *fakeCUDA) FreeAll() error {
	f.GoBackend.Close()
	f.GoBackend, f.used, f.grown = exec.NewGoBackend(), 0, false
	f.freed++
	return nil
}

func (f *fakeCUDA) Name() string { return "cuda:0" }

func (f *fakeCUDA) Alloc(n int) (exec.Buf, error) {
	if f.used+n > f.limit {
		return exec.NoBuf, fmt.Errorf("%w: fake device of %d floats is full", exec.ErrOutOfMemory, f.limit)
	}
	f.used += n
	return f.GoBackend.Alloc(n)
}

var fakeInfo = exec.CUDAInfo{Name: "Fake GPU", Major: 9, Minor: 0, Memory: 1 << 30, Driver: 13000, GEMM: "cuBLAS"}

func usable(context.Context) DeviceStatus {
	return DeviceStatus{CUDAUsable: true, GPU: "Fake GPU", Driver: "580.65.06", Reason: "ready"}
}

// ladderLimit is a fake device's size, in floats, with room for batch 40
// of cfg's model but not 48 (every float the plan allocates, measured).
func ladderLimit(t *testing.T, cfg Config) int {
	need := func(batch int) int {
		c := cfg
		c.Batch = batch
		probe := &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 1 << 40}
		if _, _, err := collect(context.Background(), c, Options{Probe: usable,
			OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) { return probe, fakeInfo, nil }}); err != nil {
			t.Fatal(err)
		}
		return probe.used
	}
	return int(float64(need(40)+need(48)) / 2 / (1 - memoryMargin))
}

func ladderConfig(t *testing.T) Config {
	cfg := tinyConfig(t, tinyDataset(t, 10))
	cfg.Epochs, cfg.Batch, cfg.Device = 1, 64, "cuda"
	return cfg
}

// logged counts the log events that contain s.
func logged(evs []Event, s string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == EventLog && strings.Contains(e.Message, s) {
			n++
		}
	}
	return n
}

// The batch is fitted to the free memory at once, said once, and the run
// on the GPU keeps its proof of use.
func TestCUDALadderFitsTheBatch(t *testing.T) {
	cfg := ladderConfig(t)
	limit := ladderLimit(t, cfg)
	var devs []*fakeCUDA
	samples := 0
	opts := Options{Probe: usable,
		OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
			f := &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: limit}
			devs = append(devs, f)
			return f, fakeInfo, nil
		},
		Sample: func(ctx context.Context, ordinal, pid int) (GPUSample, error) {
			samples++
			return GPUSample{Time: time.Now(), Utilization: 87, ProcessListed: true, ProcessMiB: 321}, nil
		}}
	evs, res, err := collect(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].freed != 0 || !strings.Contains(res.DeviceReason, "GPU memory: batch 64 needs") ||
		!strings.Contains(res.DeviceReason, "training at batch 40, the largest that fits") {
		t.Fatalf("the batch must be fitted to the free memory at once: %d opens, reason %q", len(devs), res.DeviceReason)
	}
	if res.Device != "cuda:0" || !strings.Contains(res.DeviceReason, "Fake GPU (compute capability 9.0") || !strings.Contains(res.DeviceReason, "NVIDIA driver 580.65.06") {
		t.Fatalf("device %q reason %q", res.Device, res.DeviceReason)
	}
	for _, e := range evs {
		if e.Kind == EventStart && (e.Device != "cuda:0" || !strings.Contains(e.DeviceReason, "Fake GPU")) {
			t.Fatalf("the first event must name the device and why: %+v", e)
		}
	}
	if n := logged(evs, "GPU memory"); n != 1 {
		t.Fatalf("the fitted batch must be said once, not %d times", n)
	}
	if res.GPU == nil || samples == 0 || res.GPU.Samples == 0 || !res.GPU.ProcessListed || res.GPU.MaxUtil != 87 || res.GPU.PeakProcessMiB != 321 {
		t.Fatalf("the proof of GPU use is missing: %+v (%d samples taken)", res.GPU, samples)
	}
	// The settings keep the batch the user asked for; the run folder's
	// args.yaml too.
	ck, err := LoadCheckpoint(res.RunDir)
	if err != nil || ck.Config.Batch != 64 {
		t.Fatalf("the checkpoint's settings: batch %d, %v (want the 64 asked for)", ck.Config.Batch, err)
	}
}

// A device that claims more free memory than it has: the estimate is
// short, planning runs out of memory, everything the attempt allocated is
// freed (the device stays open) and the batch halves, said once.
func TestCUDALadderHalvesWhenPlanningRunsOut(t *testing.T) {
	cfg := ladderConfig(t)
	limit := ladderLimit(t, cfg)
	var devs []*fakeCUDA
	over := Options{Probe: usable, OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
		f := &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: limit, report: 4 * limit}
		devs = append(devs, f)
		return f, fakeInfo, nil
	}}
	evs, res, err := collect(context.Background(), cfg, over)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].freed != 1 || !strings.Contains(res.DeviceReason, "out of GPU memory at batch 64: training at batch 32 (halved 1×)") {
		t.Fatalf("out of memory must free the attempt and halve: %d opens, %+v, reason %q", len(devs), devs, res.DeviceReason)
	}
	if n := logged(evs, "out of GPU memory"); n != 1 {
		t.Fatalf("the halving must be said once, not %d times", n)
	}
}

// What the device allocates on the first step does not fit: the trial
// step at opening runs out of memory, the attempt is freed and the batch
// halves before training starts, said once; the seeded run then trains as
// one opened at that batch would.
func TestCUDALadderFirstStepRunsOut(t *testing.T) {
	cfg := ladderConfig(t)
	used := func(batch int) int {
		c := cfg
		c.Batch = batch
		f := &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 1 << 40}
		if _, _, err := collect(context.Background(), c, Options{Probe: usable,
			OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) { return f, fakeInfo, nil }}); err != nil {
			t.Fatal(err)
		}
		return f.used
	}
	u64, u32 := used(64), used(32)
	lazy := u64 - u32
	var devs []*fakeCUDA
	opts := Options{Probe: usable, OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
		f := &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: u64 + lazy/2, report: 1 << 40, lazy: lazy}
		devs = append(devs, f)
		return f, fakeInfo, nil
	}}
	evs, res, err := collect(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].freed != 1 || !devs[0].grown || !strings.Contains(res.DeviceReason, "out of GPU memory at batch 64: training at batch 32 (halved 1×)") {
		t.Fatalf("the first step's allocation must be met at opening: %d opens, %+v, reason %q", len(devs), devs, res.DeviceReason)
	}
	if n := logged(evs, "out of GPU memory"); n != 1 || logged(evs, "scratch space") != 1 {
		t.Fatalf("the halving must be said once, with its cause: %d", n)
	}
	c := cfg
	c.Batch = 32
	_, at32, err := collect(context.Background(), c, Options{Probe: usable,
		OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
			return &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 1 << 40}, fakeInfo, nil
		}})
	if err != nil || at32.History[0].TrainLoss != res.History[0].TrainLoss || at32.History[0].ValLoss != res.History[0].ValLoss {
		t.Fatalf("the trial step changed training: loss %v, at batch 32 from the start %v (%v)", res.History, at32.History, err)
	}
}

// No room even at batch 1, CUDA that cannot be opened, a bad device: a
// clear error, or under auto the CPU with the reason.
func TestCUDALadderFailures(t *testing.T) {
	cfg := ladderConfig(t)
	tiny := Options{Probe: usable, OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
		return &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 100}, fakeInfo, nil
	}}
	if _, _, err := collect(context.Background(), cfg, tiny); !errors.Is(err, exec.ErrOutOfMemory) || !strings.Contains(err.Error(), "even at batch 1") {
		t.Fatalf("a model that fits nowhere: %v", err)
	}
	broken := Options{Probe: usable, OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
		return nil, exec.CUDAInfo{}, fmt.Errorf("%w: cuInit: CUDA_ERROR_NO_DEVICE (100)", exec.ErrNoCUDA)
	}}
	if _, _, err := collect(context.Background(), cfg, broken); !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), "CUDA_ERROR_NO_DEVICE") {
		t.Fatalf("cuda that cannot open must fail with why: %v", err)
	}
	cfg.Device = "auto"
	_, res, err := collect(context.Background(), cfg, broken)
	if err != nil {
		t.Fatal(err)
	}
	if res.Device != "cpu" || !strings.Contains(res.DeviceReason, "CUDA could not be opened") || res.GPU != nil {
		t.Fatalf("auto must fall back to the CPU and say why: %q %q", res.Device, res.DeviceReason)
	}
	cfg.Device = "cuda:x"
	if _, _, err := collect(context.Background(), cfg, tiny); !errors.Is(err, ErrDevice) {
		t.Fatalf("cuda:x: %v", err)
	}
}

// TestResumeOnAnotherDevice: a run begun on the GPU goes on on the CPU
// when CUDA is gone, with --device given on resume; without it, the error
// says how.
func TestResumeOnAnotherDevice(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 10))
	cfg.Epochs, cfg.Device = 1, "cuda"
	gpu := Options{Probe: usable, OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
		return &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 1 << 40}, fakeInfo, nil
	}}
	_, res, err := collect(context.Background(), cfg, gpu)
	if err != nil || res.Device != "cuda:0" {
		t.Fatalf("%v %+v", err, res)
	}
	gone := Options{Resume: res.RunDir, Extend: 1, Probe: func(context.Context) DeviceStatus {
		return DeviceStatus{Reason: "the driver is gone (gpuwizard doctor: module_not_loaded)"}
	}}
	if _, _, err := collect(context.Background(), Config{}, gone); !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), "resume with --resume "+res.RunDir+" --device cpu") {
		t.Fatalf("resuming on a machine without CUDA must say how: %v", err)
	}
	gone.Device = "cpu"
	_, res2, err := collect(context.Background(), Config{}, gone)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Device != "cpu" || res2.Epochs != 2 || len(res2.History) != 2 || res2.GPU != nil {
		t.Fatalf("resumed on %q after %d epochs (%d rows), gpu %+v", res2.Device, res2.Epochs, len(res2.History), res2.GPU)
	}
}
