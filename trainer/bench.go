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
	Eager   bool   // on CUDA: queue every kernel instead of replaying a captured step
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
	Graphs                bool   // the step was captured once and replayed (CUDA graphs)
	GraphError            string // why capturing failed, when it did (the steps ran eagerly)
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
	st, err := benchStepper(net, be, cfg.Engine, &xs, &ys)
	if err != nil {
		return res, err
	}
	if st.tr != nil {
		st.tr.SetGraphs(!cfg.Eager)
	}
	for i := 0; i < cfg.Warmup; i++ {
		if err := st.launch(i); err != nil {
			return res, err
		}
	}
	if res.LossFirst, err = st.drain(); err != nil {
		return res, err
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	for i := 0; i < cfg.Steps; i++ {
		if ctx.Err() != nil {
			return res, ErrStopped
		}
		if err := st.launch(cfg.Warmup + i); err != nil {
			return res, err
		}
	}
	if res.LossLast, err = st.drain(); err != nil {
		return res, err
	}
	if st.tr != nil {
		var gerr error
		if res.Graphs, gerr = st.tr.Graphs(); gerr != nil {
			res.GraphError = gerr.Error()
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	cpu := cpuTime() - cpu0
	imgs := float64(cfg.Steps * cfg.Batch)
	res.ImagesPerSec = perSecond(imgs, res.Seconds)
	res.ImagesPerCPUSec = imgs / max(cpu, 1e-9)
	return res, nil
}

// stepper runs the bench's training steps: launch queues step i (on a
// synchronous engine it runs it), drain waits for every launched step and
// returns the last loss. The executor keeps Trainer.Depth steps in flight
// and reads each loss when its step is done, as the PyTorch reference
// reads none until the end: neither waits for the GPU every step.
type stepper struct {
	tr     *exec.Trainer // nil for the tape machine
	launch func(i int) error
	drain  func() (float32, error)
}

func benchStepper(net *model.Net, be exec.Backend, engine string, xs, ys *[4][]float32) (*stepper, error) {
	var last float32
	if engine == "tape" {
		opt := optim.NewAdam(0)
		var params, grads [][]float32
		for _, p := range net.Params {
			params = append(params, p.Data)
		}
		return &stepper{launch: func(i int) error {
			loss, _, err := net.TrainStep(xs[i%4], ys[i%4])
			if err != nil {
				return fmt.Errorf("trainer: bench step: %w", err)
			}
			grads = grads[:0]
			for _, p := range net.Params {
				grads = append(grads, p.Grad())
			}
			opt.Step(params, grads, 1e-3)
			last = loss
			return nil
		}, drain: func() (float32, error) { return last, nil }}, nil
	}
	tg, eg := net.ExecGraphs()
	tr, err := exec.NewTrainer(be, tg, eg, exec.Optim{Kind: "adam"})
	if err != nil {
		return nil, fmt.Errorf("trainer: planning the bench model on %s: %w", be.Name(), err)
	}
	collect := func() error {
		loss, _, err := tr.Collect()
		if err != nil {
			return fmt.Errorf("trainer: bench step: %w", err)
		}
		last = loss
		return nil
	}
	return &stepper{tr: tr, launch: func(i int) error {
		if tr.Pending() == tr.Depth() {
			if err := collect(); err != nil {
				return err
			}
		}
		if err := tr.Launch(xs[i%4], ys[i%4], 1e-3); err != nil {
			return fmt.Errorf("trainer: bench step: %w", err)
		}
		return nil
	}, drain: func() (float32, error) {
		for tr.Pending() > 0 {
			if err := collect(); err != nil {
				return 0, err
			}
		}
		return last, nil
	}}, nil
}
