package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"gpuwizard/trainer"
)

// benchHelp is the help of `gpuwizard bench`.
func benchHelp() help {
	return help{
		usage: "Usage: gpuwizard bench [flags]",
		about: `Measures training speed: timed training steps on random data shaped like
the PyTorch reference's (bench/torch_reference.py), on the CPU or a GPU,
printed as one RESULT line in the reference's format so that the two compare
line for line (bench/train-speed.sh runs both). It reads and writes no file.
`,
		examples: `  gpuwizard bench --model lenet --batch 64 --threads 1
  gpuwizard bench --device cuda --batch 256
  gpuwizard bench --model cnn --steps 10
`,
		exit: `0 measured, 1 the run failed (the device cannot be used, CUDA
failed), 2 usage error (bad flags or settings), 130 stopped.
`,
	}
}

// Bench runs `gpuwizard bench`: training steps on random data shaped like
// the PyTorch reference's, printed in its RESULT format.
func Bench(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg := trainer.BenchConfig{Probe: env.Probe}
	fs.StringVar(&cfg.Model, "model", "lenet", "lenet, mlp, cnn, det-n or det-s")
	fs.IntVar(&cfg.ImageSize, "image-size", 0, "detectors: the canvas side in pixels (0: 320), 3 channels, 10 classes")
	fs.IntVar(&cfg.Batch, "batch", 64, "batch size")
	fs.IntVar(&cfg.Steps, "steps", 30, "timed steps")
	fs.IntVar(&cfg.Warmup, "warmup", 5, "untimed steps first")
	fs.IntVar(&cfg.Threads, "threads", 0, "CPU threads (0: all)")
	fs.StringVar(&cfg.Device, "device", "cpu", "cpu or cuda[:N]")
	fs.StringVar(&cfg.Engine, "engine", "exec", "exec: gpuwizard's executor, the only engine (gorgonia's tape machine now only checks it in the tests)")
	fs.BoolVar(&cfg.OwnGEMM, "own-gemm", false, "on CUDA, use gpuwizard's SGEMM kernel even when cuBLAS is there")
	fs.BoolVar(&cfg.Eager, "eager", env.getenv("GPUWIZARD_EAGER") == "1", "on CUDA, queue every kernel of every step instead of replaying the step captured in a CUDA graph (also GPUWIZARD_EAGER=1)")
	if code, ok := parseFlags(fs, args, env, benchHelp()); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "bench: unexpected argument %q (see gpuwizard bench -h)\n", fs.Arg(0))
		return ExitUsage
	}
	res, err := trainer.Bench(ctx, cfg)
	if err != nil {
		if !errors.Is(err, trainer.ErrStopped) {
			printErr(env.Stderr, "bench:", err)
		}
		return exitFor(err)
	}
	if res.DeviceInfo != "" {
		fmt.Fprintf(env.Stderr, "bench: %s: %s\n", res.Device, res.DeviceInfo)
	}
	if res.GraphError != "" {
		fmt.Fprintf(env.Stderr, "bench: CUDA graphs failed, every kernel was queued: %s\n", res.GraphError)
	}
	impl := res.Engine
	if res.Graphs {
		impl += "-cudagraph"
	}
	fmt.Fprintf(env.Stdout, "RESULT impl=gpuwizard-%s model=%s device=%s bs=%d threads=%d steps=%d sec=%.3f img_per_s=%.1f img_per_cpu_s=%.1f loss_first=%.4f loss_last=%.4f\n",
		impl, res.Model, res.Device, res.Batch, res.Threads, res.Steps, res.Seconds, res.ImagesPerSec, res.ImagesPerCPUSec, res.LossFirst, res.LossLast)
	return ExitOK
}
