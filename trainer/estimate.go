package trainer

import (
	"context"
	"math/rand"
	"time"

	"gpuwizard/trainer/data"
)

// estimateSteps is how many steps an estimate times, after one that warms
// up (and captures the CUDA graph).
const estimateSteps = 3

// EstimateEpochOn times a few training steps of the model cfg and ds
// would build, on random data, on the device a run with opts would pick
// (the GPU when Automatic picks it), and returns the expected time per
// epoch: a session and three timed steps.
func EstimateEpochOn(ctx context.Context, cfg Config, ds *data.Dataset, opts Options) (Estimate, error) {
	if err := cfg.Validate(); err != nil {
		return Estimate{}, err
	}
	spec, err := modelSpec(cfg, ds)
	if err != nil {
		return Estimate{}, err
	}
	s, err := openSession(ctx, sessionOptions{spec: spec, batch: cfg.Batch, seed: cfg.Seed, optim: optimOf(cfg),
		device: cfg.Device, probe: opts.Probe, openCUDA: opts.OpenCUDA, eager: opts.Eager, hint: "train with --device cpu"})
	if err != nil {
		return Estimate{}, err
	}
	defer s.close()
	x, y := s.randomBatch(rand.New(rand.NewSource(cfg.Seed)))
	var elapsed time.Duration
	for i := 0; i <= estimateSteps; i++ {
		if ctx.Err() != nil {
			return Estimate{}, ctx.Err()
		}
		t0 := time.Now()
		if _, err := s.step(x, y, float32(cfg.LR)); err != nil {
			return Estimate{}, err
		}
		if i > 0 {
			elapsed += time.Since(t0)
		}
	}
	per := (ds.Train.Len() + s.batch - 1) / s.batch
	return Estimate{PerEpoch: elapsed / estimateSteps * time.Duration(per), Device: s.device, Reason: s.reason, Batch: s.batch}, nil
}
