package trainer

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"time"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

// BenchConfig describes a speed measurement: training steps of a model on
// random batches shaped like the PyTorch reference's (bench/), four
// batches cycled.
type BenchConfig struct {
	Model string // lenet, mlp, cnn, det-n or det-s
	// ImageSize is a detector's canvas side (0: DefaultDetectSize); it
	// detects 10 classes in colour images, on random targets.
	ImageSize int
	Batch     int    // asked for; a GPU may run a smaller one (BenchResult.Batch)
	Steps     int    // timed steps (≥ 1)
	Warmup    int    // untimed steps first (≥ 1)
	Threads   int    // CPU threads (0: all)
	Device    string // cpu or cuda[:N]
	Engine    string // exec (the executor; "" too): the only engine
	OwnGEMM   bool   // on CUDA: the own SGEMM kernel even when cuBLAS is there
	Eager     bool   // on CUDA: queue every kernel instead of replaying a captured step
	// Probe, when set, asks the doctor before CUDA is opened.
	Probe DeviceProbe
	// OpenCUDA replaces the driver (tests); nil opens libcuda.
	OpenCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
}

// Bench runs cfg's measurement: a session on random batches. It fails
// with ErrConfig for bad settings, ErrDevice when the device cannot be
// served, and ErrStopped when ctx ends.
func Bench(ctx context.Context, cfg BenchConfig) (BenchResult, error) {
	spec, err := cfg.check()
	if err != nil {
		return BenchResult{}, err
	}
	res := BenchResult{Engine: "exec", Model: cfg.Model, Steps: cfg.Steps}
	if cfg.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Threads))
	}
	res.Threads = runtime.GOMAXPROCS(0)
	s, err := openSession(ctx, sessionOptions{spec: spec, batch: cfg.Batch, seed: 1, optim: exec.Optim{Kind: "adam"},
		device: cfg.Device, probe: cfg.Probe, openCUDA: cfg.openCUDA(), eager: cfg.Eager, hint: "bench with --device cpu"})
	if err != nil {
		return res, err
	}
	defer s.close()
	res.Device, res.DeviceInfo, res.Batch = s.device, s.info, s.batch
	rng := rand.New(rand.NewSource(1))
	var xs, ys [4][]float32 // 4 batches cycled, as in torch_reference.py
	for i := range xs {
		xs[i], ys[i] = s.randomBatch(rng)
	}
	// The steps run ahead of their results (the session keeps Depth in
	// flight) and each loss is read when its step is done, as the PyTorch
	// reference reads none until the end: neither waits for the GPU every
	// step.
	if res.LossFirst, err = benchSteps(ctx, s, &xs, &ys, 0, cfg.Warmup); err != nil {
		return res, err
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	if res.LossLast, err = benchSteps(ctx, s, &xs, &ys, cfg.Warmup, cfg.Steps); err != nil {
		return res, err
	}
	var gerr error
	if res.Graphs, gerr = s.tr.Graphs(); gerr != nil {
		res.GraphError = gerr.Error()
	}
	res.Seconds = time.Since(t0).Seconds()
	cpu := cpuTime() - cpu0
	imgs := float64(cfg.Steps * s.batch)
	res.ImagesPerSec = perSecond(imgs, res.Seconds)
	res.ImagesPerCPUSec = imgs / max(cpu, 1e-9)
	return res, nil
}

// check validates the settings and gives the model to build.
func (cfg *BenchConfig) check() (model.Spec, error) {
	if cfg.Steps < 1 || cfg.Warmup < 1 || cfg.Threads < 0 || cfg.Batch < 1 {
		return model.Spec{}, fmt.Errorf("%w: steps and warmup must be ≥ 1, batch ≥ 1, threads ≥ 0", ErrConfig)
	}
	if cfg.Engine != "" && cfg.Engine != "exec" {
		return model.Spec{}, fmt.Errorf("%w: engine %q: the only engine is exec (gorgonia's tape machine is no longer a training engine: it checks the executor in the tests)", ErrConfig, cfg.Engine)
	}
	if cfg.Device == "" {
		cfg.Device = "cpu"
	}
	if cfg.Device != "cpu" {
		if _, err := CUDAOrdinal(cfg.Device); err != nil {
			return model.Spec{}, fmt.Errorf("%w: %w (or cpu)", ErrConfig, err)
		}
	}
	spec := model.Spec{Kind: cfg.Model, Channels: 1, Height: 28, Width: 28, Classes: 10}
	if cfg.Model == model.CNN {
		spec.Channels, spec.Height, spec.Width = 3, 32, 32
	}
	if spec.IsDetector() {
		size := cfg.ImageSize
		if size == 0 {
			size = DefaultDetectSize
		}
		spec.Channels, spec.Height, spec.Width = 3, size, size
	}
	if err := spec.Validate(); err != nil {
		return spec, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return spec, nil
}

// openCUDA is how the bench opens a GPU: cfg.OpenCUDA, else the driver,
// with the own SGEMM kernel when asked.
func (cfg *BenchConfig) openCUDA() func(int) (exec.Backend, exec.CUDAInfo, error) {
	if cfg.OpenCUDA != nil {
		return cfg.OpenCUDA
	}
	own := cfg.OwnGEMM
	return func(ordinal int) (exec.Backend, exec.CUDAInfo, error) {
		cb, err := exec.OpenCUDA(ordinal)
		if err != nil {
			return nil, exec.CUDAInfo{}, err
		}
		if own {
			cb.UseOwnGEMM()
		}
		return cb, cb.Info(), nil
	}
}

// benchSteps launches n steps from step first on the cycled batches,
// collecting as the session's depth asks, then waits for them all: the
// last loss.
func benchSteps(ctx context.Context, s *session, xs, ys *[4][]float32, first, n int) (float32, error) {
	var last float32
	collect := func() error {
		loss, _, _, err := s.collect()
		if err != nil {
			return fmt.Errorf("trainer: bench step: %w", err)
		}
		last = loss
		return nil
	}
	for i := first; i < first+n; i++ {
		if ctx.Err() != nil {
			return 0, ErrStopped
		}
		if s.full() {
			if err := collect(); err != nil {
				return 0, err
			}
		}
		if err := s.launch(xs[i%4], ys[i%4], 1e-3); err != nil {
			return 0, fmt.Errorf("trainer: bench step: %w", err)
		}
	}
	for s.pending() > 0 {
		if err := collect(); err != nil {
			return 0, err
		}
	}
	return last, nil
}
