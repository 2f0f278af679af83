package trainer

import (
	"context"
	"fmt"

	"gpuwizard/trainer/data"
	"gpuwizard/trainer/model"
)

// openRun opens the device, loads the dataset (or takes the caller's
// copy) and builds the session's model for it, saying what a user should
// know on the way.
func openRun(ctx context.Context, cfg Config, opts Options, rs *resumed, say func(string)) (*session, *data.Dataset, error) {
	hint := "train with --device cpu"
	if rs.d != nil {
		hint = "resume with --resume " + rs.d.dir + " --device cpu"
	}
	s, err := openDevice(ctx, sessionOptions{batch: cfg.Batch, seed: cfg.Seed, optim: optimOf(cfg),
		device: cfg.Device, probe: opts.Probe, openCUDA: opts.OpenCUDA, eager: opts.Eager, hint: hint, say: say})
	if err != nil {
		return nil, nil, err
	}
	ds, spec, err := loadDataset(cfg, opts, say)
	if err == nil {
		if cfg.Model == "auto" && rs.d == nil {
			_, why := AutoModel(cfg, ds)
			say("model auto: " + why)
		}
		err = s.build(spec)
	}
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, ds, nil
}

// loadDataset takes the caller's copy of the dataset when it was loaded
// with the run's settings, else loads it; it says the lint summary and
// how the images were sized, and picks the model.
func loadDataset(cfg Config, opts Options, say func(string)) (*data.Dataset, model.Spec, error) {
	ds := opts.Dataset
	var err error
	if !ds.LoadedWith(cfg.Data, cfg.DataOptions()) {
		ds, err = data.Load(cfg.Data, cfg.DataOptions())
	}
	if ds != nil && ds.Lint != nil {
		say("dataset " + ds.Root + "\n" + ds.Lint.Summary())
	}
	if err != nil {
		return nil, model.Spec{}, fmt.Errorf("trainer: %w", err)
	}
	if err := ds.CheckBatch(cfg.Batch); err != nil { // the float32 batches count against the dataset's memory
		return nil, model.Spec{}, fmt.Errorf("trainer: %w", err)
	}
	spec, err := modelSpec(cfg, ds)
	if err != nil {
		return nil, spec, err
	}
	if note := ds.SizeNote; note != "" && cfg.ImageSize == 0 {
		say(note)
	}
	return ds, spec, nil
}
