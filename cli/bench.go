package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"gpuwizard/trainer"
)

// Bench runs `gpuwizard bench`: training steps on random data shaped like
// the PyTorch reference's, printed in its RESULT format.
func Bench(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfg := trainer.BenchConfig{Probe: env.Probe}
	fs.StringVar(&cfg.Model, "model", "lenet", "lenet, mlp or cnn")
	fs.IntVar(&cfg.Batch, "batch", 64, "batch size")
	fs.IntVar(&cfg.Steps, "steps", 30, "timed steps")
	fs.IntVar(&cfg.Warmup, "warmup", 5, "untimed steps first")
	fs.IntVar(&cfg.Threads, "threads", 0, "CPU threads (0: all)")
	fs.StringVar(&cfg.Device, "device", "cpu", "cpu or cuda[:N]")
	fs.StringVar(&cfg.Engine, "engine", "exec", "exec (gpuwizard's executor) or tape (gorgonia's tape machine, CPU only)")
	fs.BoolVar(&cfg.OwnGEMM, "own-gemm", false, "on CUDA, use gpuwizard's SGEMM kernel even when cuBLAS is there")
	fs.BoolVar(&cfg.Eager, "eager", env.getenv("GPUWIZARD_EAGER") == "1", "on CUDA, queue every kernel of every step instead of replaying the step captured in a CUDA graph (also GPUWIZARD_EAGER=1)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	res, err := trainer.Bench(ctx, cfg)
	switch {
	case errors.Is(err, trainer.ErrStopped):
		return ExitStopped
	case errors.Is(err, trainer.ErrConfig):
		fmt.Fprintln(env.Stderr, "bench:", err)
		return ExitUsage
	case err != nil:
		fmt.Fprintln(env.Stderr, "bench:", err)
		return ExitFailed
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
