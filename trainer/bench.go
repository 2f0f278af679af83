package trainer

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"time"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// BenchConfig describes a speed measurement: training steps of a model on
// random batches shaped like the PyTorch reference's (bench/), four
// batches cycled.
type BenchConfig struct {
	Model   string // lenet, mlp or cnn
	Batch   int
	Steps   int    // timed steps (≥ 1)
	Warmup  int    // untimed steps first (≥ 1)
	Threads int    // CPU threads (0: all)
	Device  string // cpu or cuda[:N]
	Engine  string // exec (the executor) or tape (gorgonia's tape machine, CPU only)
	OwnGEMM bool   // on CUDA: the own SGEMM kernel even when cuBLAS is there
	// Probe, when set, asks the doctor before CUDA is opened.
	Probe DeviceProbe
	// OpenCUDA replaces the driver (tests); nil opens libcuda.
	OpenCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
}

// BenchResult is what a measurement found.
type BenchResult struct {
	Engine, Model, Device string
	DeviceInfo            string // the backend's description, on CUDA
	Batch, Threads, Steps int
	Seconds               float64
	ImagesPerSec          float64
	ImagesPerCPUSec       float64 // images per second of this process's CPU time
	LossFirst, LossLast   float32
}

// Bench runs cfg's measurement. It fails with ErrConfig for bad settings,
// ErrDevice when the device cannot be served, and ErrStopped when ctx ends.
func Bench(ctx context.Context, cfg BenchConfig) (BenchResult, error) {
	if cfg.Steps < 1 || cfg.Warmup < 1 || cfg.Threads < 0 || cfg.Batch < 1 {
		return BenchResult{}, fmt.Errorf("%w: steps and warmup must be ≥ 1, batch ≥ 1, threads ≥ 0", ErrConfig)
	}
	if cfg.Engine == "" {
		cfg.Engine = "exec"
	}
	if cfg.Device == "" {
		cfg.Device = "cpu"
	}
	if cfg.Engine != "exec" && cfg.Engine != "tape" || cfg.Engine == "tape" && cfg.Device != "cpu" {
		return BenchResult{}, fmt.Errorf("%w: the engine is exec or tape, and tape runs on the CPU only", ErrConfig)
	}
	res := BenchResult{Engine: cfg.Engine, Model: cfg.Model, Batch: cfg.Batch, Steps: cfg.Steps}
	var be exec.Backend = exec.NewGoBackend()
	if cfg.Device != "cpu" {
		ordinal, err := CUDAOrdinal(cfg.Device)
		if err != nil {
			return res, fmt.Errorf("%w: %w (or cpu)", ErrConfig, err)
		}
		if cfg.Probe != nil {
			if st := cfg.Probe(ctx); !st.CUDAUsable {
				return res, fmt.Errorf("%w: %s cannot be served: %s", ErrDevice, cfg.Device, st.Reason)
			}
		}
		open := cfg.OpenCUDA
		if open == nil {
			open = func(ordinal int) (exec.Backend, exec.CUDAInfo, error) {
				cb, err := exec.OpenCUDA(ordinal)
				if err != nil {
					return nil, exec.CUDAInfo{}, err
				}
				if cfg.OwnGEMM {
					cb.UseOwnGEMM()
				}
				return cb, cb.Info(), nil
			}
		}
		cb, info, err := open(ordinal)
		if err != nil {
			return res, fmt.Errorf("%w: %s: %w", ErrDevice, cfg.Device, err)
		}
		res.DeviceInfo = info.String()
		be = cb
	}
	defer be.Close()
	res.Device = be.Name()
	if cfg.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Threads))
	}
	res.Threads = runtime.GOMAXPROCS(0)
	spec := model.Spec{Kind: cfg.Model, Channels: 1, Height: 28, Width: 28, Classes: 10}
	if cfg.Model == model.CNN {
		spec.Channels, spec.Height, spec.Width = 3, 32, 32
	}
	net, err := model.Build(spec, cfg.Batch, 1)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rng := rand.New(rand.NewSource(1))
	var xs, ys [4][]float32 // 4 batches cycled, as in torch_reference.py
	for i := range xs {
		xs[i], ys[i] = net.RandomBatch(rng)
	}
	step, err := benchStep(net, be, cfg.Engine, &xs, &ys)
	if err != nil {
		return res, err
	}
	for i := 0; i < cfg.Warmup; i++ {
		if res.LossFirst, err = step(i); err != nil {
			return res, err
		}
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	for i := 0; i < cfg.Steps; i++ {
		if ctx.Err() != nil {
			return res, ErrStopped
		}
		if res.LossLast, err = step(cfg.Warmup + i); err != nil {
			return res, err
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	cpu := cpuTime() - cpu0
	imgs := float64(cfg.Steps * cfg.Batch)
	res.ImagesPerSec = imgs / res.Seconds
	res.ImagesPerCPUSec = imgs / max(cpu, 1e-9)
	return res, nil
}

// benchStep returns one training step of engine over the cycled batches.
// The executor's step reads the loss: one synchronisation per step, as
// the reference's loss.item().
func benchStep(net *model.Net, be exec.Backend, engine string, xs, ys *[4][]float32) (func(i int) (float32, error), error) {
	if engine == "tape" {
		opt := optim.NewAdam(0)
		var params, grads [][]float32
		for _, p := range net.Params {
			params = append(params, p.Data)
		}
		return func(i int) (float32, error) {
			loss, _, err := net.TrainStep(xs[i%4], ys[i%4])
			if err != nil {
				return 0, fmt.Errorf("trainer: bench step: %w", err)
			}
			grads = grads[:0]
			for _, p := range net.Params {
				grads = append(grads, p.Grad())
			}
			opt.Step(params, grads, 1e-3)
			return loss, nil
		}, nil
	}
	tg, eg := net.ExecGraphs()
	tr, err := exec.NewTrainer(be, tg, eg, exec.Optim{Kind: "adam"})
	if err != nil {
		return nil, fmt.Errorf("trainer: planning the bench model on %s: %w", be.Name(), err)
	}
	return func(i int) (float32, error) {
		loss, _, err := tr.Step(xs[i%4], ys[i%4], 1e-3)
		if err != nil {
			return 0, fmt.Errorf("trainer: bench step: %w", err)
		}
		return loss, nil
	}, nil
}
