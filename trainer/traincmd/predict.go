package traincmd

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"time"

	"gpuwizard/trainer"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// Predict runs `gpuwizard predict --model RUN/best IMAGE...`.
func Predict(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	modelPath := fs.String("model", "", "a checkpoint: runs/NAME/best, runs/NAME/last, or a .ckpt file")
	top := fs.Int("top", 3, "how many classes to show per image")
	invert := fs.String("invert", "auto", "for grey models: invert dark-on-light images to light-on-dark like MNIST (auto, yes, no)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *modelPath == "" || fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "Usage: gpuwizard predict --model runs/NAME/best IMAGE...")
		return ExitUsage
	}
	if *invert != "auto" && *invert != "yes" && *invert != "no" {
		fmt.Fprintln(env.Stderr, "predict: --invert must be auto, yes or no")
		return ExitUsage
	}
	p, err := trainer.LoadPredictor(*modelPath)
	if err != nil {
		fmt.Fprintln(env.Stderr, "predict:", err)
		return ExitFailed
	}
	code := ExitOK
	for _, img := range fs.Args() {
		preds, err := p.PredictFile(img, *invert)
		if err != nil {
			fmt.Fprintln(env.Stderr, "predict:", err)
			code = ExitFailed
			continue
		}
		fmt.Fprintf(env.Stdout, "%s:", img)
		for i, pr := range preds {
			if i >= *top {
				break
			}
			fmt.Fprintf(env.Stdout, "  %s %.1f%%", pr.Class, 100*pr.Prob)
		}
		fmt.Fprintln(env.Stdout)
	}
	return code
}

// Bench runs `gpuwizard bench`: training steps on random data shaped like
// the PyTorch reference's, printed in its RESULT format.
func Bench(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	kind := fs.String("model", "lenet", "lenet, mlp or cnn")
	batch := fs.Int("batch", 64, "batch size")
	steps := fs.Int("steps", 30, "timed steps")
	warmup := fs.Int("warmup", 5, "untimed steps first")
	threads := fs.Int("threads", 0, "CPU threads (0: all)")
	device := fs.String("device", "cpu", "cpu or cuda[:N]")
	engine := fs.String("engine", "exec", "exec (gpuwizard's executor) or tape (gorgonia's tape machine, CPU only)")
	ownGemm := fs.Bool("own-gemm", false, "on CUDA, use gpuwizard's SGEMM kernel even when cuBLAS is there")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *steps < 1 || *warmup < 1 || *threads < 0 {
		fmt.Fprintln(env.Stderr, "bench: --steps and --warmup must be ≥ 1, --threads ≥ 0")
		return ExitUsage
	}
	if *engine != "exec" && *engine != "tape" || *engine == "tape" && *device != "cpu" {
		fmt.Fprintln(env.Stderr, "bench: --engine is exec or tape, and tape runs on the CPU only")
		return ExitUsage
	}
	var be exec.Backend = exec.NewGoBackend()
	if *device != "cpu" {
		ordinal, err := trainer.CUDAOrdinal(*device)
		if err != nil {
			fmt.Fprintln(env.Stderr, "bench:", err, "(or cpu)")
			return ExitUsage
		}
		if env.Probe != nil {
			if st := env.Probe(ctx); !st.CUDAUsable {
				fmt.Fprintf(env.Stderr, "bench: --device %s cannot be served: %s\n", *device, st.Reason)
				return ExitFailed
			}
		}
		cb, err := exec.OpenCUDA(ordinal)
		if err != nil {
			fmt.Fprintf(env.Stderr, "bench: --device %s: %v\n", *device, err)
			return ExitFailed
		}
		if *ownGemm {
			cb.UseOwnGEMM()
		}
		fmt.Fprintf(env.Stderr, "bench: %s: %s\n", cb.Name(), cb.Info())
		be = cb
	}
	defer be.Close()
	if *threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*threads))
	}
	spec := model.Spec{Kind: *kind, Channels: 1, Height: 28, Width: 28, Classes: 10}
	if *kind == model.CNN {
		spec.Channels, spec.Height, spec.Width = 3, 32, 32
	}
	net, err := model.Build(spec, *batch, 1)
	if err != nil {
		fmt.Fprintln(env.Stderr, "bench:", err)
		return ExitUsage
	}
	rng := rand.New(rand.NewSource(1))
	var xs, ys [4][]float32 // 4 batches cycled, as in torch_reference.py
	for i := range xs {
		xs[i], ys[i] = net.RandomBatch(rng)
	}
	var step func(i int) float32
	if *engine == "tape" {
		opt := optim.NewAdam(0)
		var params, grads [][]float32
		for _, p := range net.Params {
			params = append(params, p.Data)
		}
		step = func(i int) float32 {
			loss, _, err := net.TrainStep(xs[i%4], ys[i%4])
			if err != nil {
				fmt.Fprintln(env.Stderr, "bench:", err)
				return float32(math.NaN())
			}
			grads = grads[:0]
			for _, p := range net.Params {
				grads = append(grads, p.Grad())
			}
			opt.Step(params, grads, 1e-3)
			return loss
		}
	} else {
		tg, eg := net.ExecGraphs()
		tr, err := exec.NewTrainer(be, tg, eg, exec.Optim{Kind: "adam"})
		if err != nil {
			fmt.Fprintln(env.Stderr, "bench:", err)
			return ExitFailed
		}
		step = func(i int) float32 {
			loss, _, err := tr.Step(xs[i%4], ys[i%4], 1e-3) // reads the loss: one sync per step
			if err != nil {
				fmt.Fprintln(env.Stderr, "bench:", err)
				return float32(math.NaN())
			}
			return loss
		}
	}
	var first, last float32
	for i := 0; i < *warmup; i++ {
		first = step(i)
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	for i := 0; i < *steps; i++ {
		if ctx.Err() != nil {
			return ExitStopped
		}
		last = step(*warmup + i)
	}
	el := time.Since(t0).Seconds()
	cpu := cpuTime() - cpu0
	imgs := float64(*steps * *batch)
	fmt.Fprintf(env.Stdout, "RESULT impl=gpuwizard-%s model=%s device=%s bs=%d threads=%d steps=%d sec=%.3f img_per_s=%.1f img_per_cpu_s=%.1f loss_first=%.4f loss_last=%.4f\n",
		*engine, *kind, be.Name(), *batch, runtime.GOMAXPROCS(0), *steps, el, imgs/el, imgs/math.Max(cpu, 1e-9), first, last)
	return ExitOK
}
