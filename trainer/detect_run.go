package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/model"
)

// trainDetect is train for a detector: the dataset is a detect.Dataset
// (detect.Load: the lint first, images letterboxed to the canvas), the
// loop detLoop. Resuming, the run folder, the device and the session are
// the classifiers'.
func trainDetect(ctx context.Context, cfg Config, em *emitter, opts Options, rs *resumed) (*Result, error) {
	say := func(m string) { em.send(ctx, Event{Kind: EventLog, Message: m}) }
	s, ds, err := openDetectRun(ctx, cfg, opts, rs, say)
	if err != nil {
		return nil, err
	}
	defer s.close()
	res := &Result{Device: s.device, DeviceReason: s.reason, Classes: ds.Classes}
	d, release, err := useRunDir(rs, opts, res, say, func() (*rundir, error) { return newDetectRunDir(cfg, opts, s, ds) })
	if err != nil {
		return nil, err
	}
	defer release()
	return res, drive(ctx, newDetLoop(cfg, ds, s, d, em, opts, res), rs)
}

// openDetectRun opens the device, loads the detection dataset (or takes
// the caller's) and builds the detector for it.
func openDetectRun(ctx context.Context, cfg Config, opts Options, rs *resumed, say func(string)) (*session, *detect.Dataset, error) {
	hint := "train with --device cpu"
	if rs.d != nil {
		hint = "resume with --resume " + rs.d.dir + " --device cpu"
	}
	s, err := openDevice(ctx, sessionOptions{batch: cfg.Batch, seed: cfg.Seed, optim: optimOf(cfg),
		device: cfg.Device, probe: opts.Probe, openCUDA: opts.OpenCUDA, eager: opts.Eager, hint: hint, say: say})
	if err != nil {
		return nil, nil, err
	}
	ds, err := loadDetectDataset(cfg, opts, say)
	var spec model.Spec
	if err == nil {
		spec, err = detectSpec(cfg, ds)
	}
	if err == nil {
		if cfg.Model == "auto" && rs.d == nil {
			say(fmt.Sprintf("model auto: %s, the nano detector, at %d px", spec.Kind, ds.Size))
		}
		err = s.build(spec)
	}
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, ds, nil
}

// loadDetectDataset takes the caller's dataset when it has the run's
// canvas size, else loads cfg.Data; it says the lint summary.
func loadDetectDataset(cfg Config, opts Options, say func(string)) (*detect.Dataset, error) {
	ds := opts.DetectDataset
	var err error
	if ds == nil || ds.Size != cfg.DetectSize() {
		ds, err = detect.Load(cfg.Data, cfg.DetectSize(), cfg.Seed)
	}
	if ds != nil && ds.Lint != nil {
		say("dataset " + ds.Root + "\n" + ds.Lint.Summary())
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if ds.Train.Len() == 0 || ds.Val.Len() == 0 {
		return nil, fmt.Errorf("trainer: %s has %s and %s: a detector needs both splits (data.yaml's train and val)",
			ds.Root, plural.Count(ds.Train.Len(), "training image"), plural.Count(ds.Val.Len(), "validation image"))
	}
	return ds, nil
}

// newDetectRunDir creates and locks a detection run's folder and records
// its settings, labels and environment.
func newDetectRunDir(cfg Config, opts Options, s *session, ds *detect.Dataset) (*rundir, error) {
	d, err := createRunDir(cfg.Project, cfg.Name, opts.FS)
	if err != nil {
		return nil, err
	}
	if err := d.writeMeta(cfg, ds.Classes, detectFingerprint(s.device, s.reason, ds)); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

// detectFingerprint is a detection run's env.json.
func detectFingerprint(device, reason string, ds *detect.Dataset) []byte {
	host, _ := os.Hostname()
	env := map[string]any{
		"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "cpus": runtime.NumCPU(),
		"threads": runtime.GOMAXPROCS(0), "host": host, "device": device, "device_reason": reason,
		"dataset": map[string]any{"root": ds.Root, "format": ds.Format, "classes": len(ds.Classes), "task": TaskDetect,
			"train": ds.Train.Len(), "val": ds.Val.Len(), "size": fmt.Sprintf("%dx%dx%d", ds.Channels, ds.Size, ds.Size)},
		"started": time.Now().UTC().Format(time.RFC3339),
	}
	b, _ := json.MarshalIndent(env, "", "  ")
	return append(b, '\n')
}

// evaluateDetectorCheckpoint measures a detector's checkpoint on its
// dataset's validation split (RunResults of a stopped detection run).
func evaluateDetectorCheckpoint(ctx context.Context, dir, path string, ck *Checkpoint) (*Result, error) {
	cfg := ck.Config
	ds, err := detect.Load(cfg.Data, ck.Spec.Height, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("trainer: evaluating %s needs its dataset %s: %w (move the dataset back, or resume the run to finish it)", path, cfg.Data, err)
	}
	if len(ds.Classes) != ck.Spec.Classes || ds.Channels != ck.Spec.Channels {
		return nil, fmt.Errorf("%w: %s holds a %s for %d classes of %d-channel images, but %s now has %d classes of %d channels: the dataset changed since the run",
			ErrCheckpoint, path, ck.Spec.Kind, ck.Spec.Classes, ck.Spec.Channels, cfg.Data, len(ds.Classes), ds.Channels)
	}
	s, err := openSession(ctx, sessionOptions{spec: ck.Spec, batch: cfg.Batch, seed: cfg.Seed, optim: optimOf(cfg), device: "cpu"})
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.load(ck, false); err != nil {
		return nil, err
	}
	h, w := ck.Spec.Grid()
	b := newDetBatcher(ds.Val, ds.Size, ds.Channels, s.batch, detect.Grid{H: h, W: w, Stride: ds.Size / h}, false)
	preds, truths, err := evaluateDetector(s, b, len(ds.Classes), nil)
	if err != nil {
		return nil, fmt.Errorf("trainer: evaluating %s: %w", path, err)
	}
	m := detect.Evaluate(preds, truths, ds.Classes)
	m.Split = "val"
	res := &Result{RunDir: dir, BestEpoch: ck.Epoch, History: ck.History, Classes: ck.Classes, Detect: &m}
	if ck.BestEpoch > 0 {
		res.BestEpoch = ck.BestEpoch
	}
	return res, ctx.Err()
}
