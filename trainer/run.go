package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// Sentinel errors of a run.
var (
	ErrDevice  = errors.New("trainer: device")
	ErrStopped = errors.New("trainer: stopped")
	ErrDiverge = errors.New("trainer: training diverged")
)

// DeviceStatus is what the caller knows about the GPU (from the doctor).
type DeviceStatus struct {
	CUDAUsable bool   // a GPU with a working driver is there
	GPU        string // its name
	Driver     string // the NVIDIA driver's version, e.g. "580.65.06"
	Reason     string // why not usable, or the verdict, in words
	// GPUs are every GPU the doctor saw, in index order ("NVIDIA A100-SXM4-40GB"),
	// so a device list can offer cuda:0 … cuda:N-1.
	GPUs []string
}

// DeviceProbe asks about the GPU. The trainer does not judge GPUs itself.
type DeviceProbe func(ctx context.Context) DeviceStatus

// EpochResult is one row of results.csv.
type EpochResult struct {
	Epoch        int     `json:"epoch"`
	Seconds      float64 `json:"seconds"`
	TrainLoss    float64 `json:"train_loss"`
	TrainAcc     float64 `json:"train_accuracy"`
	ValLoss      float64 `json:"val_loss"`
	ValAcc       float64 `json:"val_accuracy"`
	ValTop5      float64 `json:"val_top5"`
	LR           float64 `json:"lr"`
	ImagesPerSec float64 `json:"images_per_s"`
}

// Result is a run's outcome.
type Result struct {
	RunDir       string        `json:"run_dir"`
	Device       string        `json:"device"`
	DeviceReason string        `json:"device_reason"`
	Epochs       int           `json:"epochs"` // completed
	BestEpoch    int           `json:"best_epoch"`
	Stopped      string        `json:"stopped,omitempty"` // why it ended before the last epoch
	History      []EpochResult `json:"history"`
	Val          *Metrics      `json:"val,omitempty"`  // best model on the validation split
	Test         *Metrics      `json:"test,omitempty"` // best model on the test split, when there is one
	Classes      []string      `json:"classes"`
	GPU          *GPUProof     `json:"gpu,omitempty"` // what NVML saw while training on CUDA
}

// Options are the parts of a run that are not configuration.
type Options struct {
	// Resume continues the run in this folder from its last checkpoint.
	Resume string
	// Extend adds epochs to a finished (or stopped) run given in Resume.
	Extend int
	// Control pauses and resumes the run.
	Control *Control
	// Probe asks the doctor about the GPU; nil: not asked.
	Probe DeviceProbe
	// FS writes checkpoints; nil: the real file system.
	FS FileSystem
	// OpenCUDA opens a CUDA device; nil: exec.OpenCUDA (the driver loaded
	// at run time).
	OpenCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
	// Device, when set, replaces the device of a resumed run's checkpoint
	// (a run begun on a GPU can go on on the CPU, and back).
	Device string
	// Sample reads the GPU's utilisation and this process's use of it
	// while training on CUDA (the proof of GPU use); nil: not sampled.
	Sample GPUSampler
	// Dataset, when it was loaded with the run's data path and options
	// (data.Dataset.LoadedWith), is used instead of loading a second copy
	// (the window has it loaded already); otherwise the run loads its own.
	Dataset *data.Dataset
	// Eager queues every kernel of every step on CUDA instead of
	// capturing the step once in a CUDA graph and replaying it (for
	// debugging, or to compare).
	Eager bool
	// RunIndex, when set, is the index file (DefaultRunIndex) the run
	// folder is recorded in once it exists, so that the window lists runs
	// made anywhere; "" records nothing. A failure to record is logged,
	// never a failure of the run.
	RunIndex string
}

// Run trains in the caller's goroutine and reports on events (which the
// caller owns and drains; Run never closes it). Cancelling ctx stops after
// the current step and leaves a resumable last.ckpt.
func Run(ctx context.Context, cfg Config, events chan<- Event) (*Result, error) {
	return RunWithOptions(ctx, cfg, events, Options{})
}

// RunWithOptions is Run with resume, extend, pause control, the GPU probe
// and the checkpoint file system.
func RunWithOptions(ctx context.Context, cfg Config, events chan<- Event, opts Options) (*Result, error) {
	em := &emitter{ch: events}
	res, err := run(ctx, cfg, em, opts)
	done := Event{Kind: EventDone, Result: res}
	if res != nil {
		done.RunDir, done.Device, done.DeviceReason = res.RunDir, res.Device, res.DeviceReason
	}
	switch {
	case errors.Is(err, ErrStopped):
		done.Message = "stopped; resume with: gpuwizard train --resume " + done.RunDir
	case err != nil:
		done.Message = err.Error()
	default:
		done.Message = "finished"
	}
	em.send(ctx, done)
	return res, err
}

type runner struct {
	cfg     Config
	opts    Options
	em      *emitter
	ds      *data.Dataset
	net     *model.Net
	be      exec.Backend
	tr      *exec.Trainer
	ordinal int // the CUDA device, when be is one
	dir     string
	res     *Result
	ck      *Checkpoint
	params  [][]float32
	device  string
	reason  string
	resumed bool
	proof   *proofSampler
	lock    *runLock // the run folder's, held while training
	steps   []StepPoint
	smooth  smoother
	extend  string // what "train more epochs" does to the learning rate, for the log
	// restartNote says that a resumed run had no checkpoint and starts again.
	restartNote string
}

func run(ctx context.Context, cfg Config, em *emitter, opts Options) (*Result, error) {
	r := &runner{cfg: cfg, opts: opts, em: em}
	defer func() { r.lock.release() }()
	if opts.Resume != "" {
		if err := r.loadResume(); err != nil {
			return nil, err
		}
		if r.restartNote != "" {
			em.send(ctx, Event{Kind: EventLog, Message: r.restartNote})
		} else if w := r.ck.Warning(); w != "" {
			em.send(ctx, Event{Kind: EventLog, Message: "warning: " + w})
		}
	}
	if err := r.cfg.Validate(); err != nil {
		return nil, err
	}
	if err := r.selectDevice(ctx); err != nil {
		return nil, err
	}
	if r.cfg.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(r.cfg.Threads))
	}
	ds := r.opts.Dataset
	var err error
	if !ds.LoadedWith(r.cfg.Data, r.cfg.DataOptions()) {
		ds, err = data.Load(r.cfg.Data, r.cfg.DataOptions())
	}
	if ds != nil && ds.Lint != nil {
		em.send(ctx, Event{Kind: EventLog, Message: "dataset " + ds.Root + "\n" + ds.Lint.Summary()})
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	r.ds = ds
	if err := ds.CheckBatch(r.cfg.Batch); err != nil { // the float32 batches count against the dataset's memory
		return nil, fmt.Errorf("trainer: %w", err)
	}
	spec, err := r.spec()
	if err != nil {
		return nil, err
	}
	if note := ds.SizeNote; note != "" && r.cfg.ImageSize == 0 {
		em.send(ctx, Event{Kind: EventLog, Message: note})
	}
	if r.cfg.Model == "auto" && !r.resumed {
		_, why := AutoModel(r.cfg, ds)
		em.send(ctx, Event{Kind: EventLog, Message: "model auto: " + why})
	}
	defer func() {
		if r.be != nil {
			r.be.Close()
		}
	}()
	if err := r.build(ctx, spec); err != nil {
		return nil, err
	}
	r.res = &Result{Device: r.device, DeviceReason: r.reason, Classes: ds.Classes}
	if r.device != "cpu" {
		r.res.GPU = &GPUProof{Device: r.device}
		if r.opts.Sample != nil {
			r.proof = &proofSampler{read: r.opts.Sample, ordinal: r.ordinal}
		} else {
			r.res.GPU.Error = "not sampled: no NVML sampler was given"
		}
	}
	if err := r.prepareDir(); err != nil {
		return nil, err
	}
	r.res.RunDir = r.dir
	if idx := r.opts.RunIndex; idx != "" {
		if err := RecordRun(idx, r.dir); err != nil {
			em.send(ctx, Event{Kind: EventLog, Message: "note: the window's Runs view will not list this run: " + err.Error()})
		}
	}
	if r.ck != nil {
		if err := r.restore(); err != nil {
			return r.res, err
		}
	}
	err = r.loop(ctx)
	r.saveFinalState(err)
	return r.res, err
}

// spec picks the model for the dataset.
func (r *runner) spec() (model.Spec, error) {
	d := r.ds
	kind, _ := AutoModel(r.cfg, d)
	if r.cfg.ImageSize != 0 && (d.Format == "idx" || d.Format == "builtin" || d.Format == "cifar10") && r.cfg.ImageSize != d.Height {
		return model.Spec{}, fmt.Errorf("%w: image_size: %d, but %s images are %dx%d and are not resized: set image_size 0", ErrConfig, r.cfg.ImageSize, d.Format, d.Width, d.Height)
	}
	s := model.Spec{Kind: kind, Channels: d.Channels, Height: d.Height, Width: d.Width, Classes: len(d.Classes)}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("trainer: model for %s (%dx%d, %d channels): %w", d.Root, d.Width, d.Height, d.Channels, err)
	}
	return s, nil
}

// prepareDir makes runs/NAME (a new name unless resuming) and records the
// configuration, the environment and the labels.
func (r *runner) prepareDir() error {
	if r.resumed {
		return nil
	}
	if err := os.MkdirAll(r.cfg.Project, 0o755); err != nil {
		return fmt.Errorf("trainer: project folder: %w", err)
	}
	base := r.cfg.Name
	if base == "" {
		base = "train"
	}
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = base + strconv.Itoa(i)
		}
		dir := filepath.Join(r.cfg.Project, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			r.dir = dir
			lock, err := lockRunDir(dir)
			if err != nil {
				return err
			}
			r.lock = lock
			break
		}
		if !os.IsExist(err) {
			return fmt.Errorf("trainer: run folder: %w", err)
		}
		// An existing run is never overwritten: the next number is taken.
	}
	files := map[string][]byte{
		"args.yaml": r.cfg.YAML(),
		// One class a line: a control character in a name is written
		// escaped (\n, \x1b), so the file has a line per class.
		"labels.txt": []byte(strings.Join(printable.Strings(r.ds.Classes), "\n") + "\n"),
		"env.json":   r.fingerprint(),
	}
	for name, b := range files {
		if err := writeAtomic(r.opts.FS, filepath.Join(r.dir, name), b); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
	}
	return nil
}

func (r *runner) fingerprint() []byte {
	host, _ := os.Hostname()
	env := map[string]any{
		"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "cpus": runtime.NumCPU(),
		"threads": runtime.GOMAXPROCS(0), "host": host, "device": r.device, "device_reason": r.reason,
		"dataset": map[string]any{"root": r.ds.Root, "format": r.ds.Format, "classes": len(r.ds.Classes),
			"train": r.ds.Train.Len(), "val": r.ds.Val.Len(), "size": fmt.Sprintf("%dx%dx%d", r.ds.Channels, r.ds.Height, r.ds.Width)},
		"started": time.Now().UTC().Format(time.RFC3339),
	}
	b, _ := json.MarshalIndent(env, "", "  ")
	return append(b, '\n')
}

// restartEmpty resumes a run that has no checkpoint (it was stopped or
// killed before its first epoch ended, perhaps in the middle of writing
// its first checkpoint): it trains again from the start in the same
// folder, with the settings of its args.yaml. The first save removes the
// temporary file an interrupted save left.
func (r *runner) restartEmpty(dir string) error {
	args := filepath.Join(dir, "args.yaml")
	raw, err := safefile.ReadFile(args, MaxConfigFile, "a run's args.yaml")
	if err != nil {
		return fmt.Errorf("%w: resume: %s has no last.ckpt and no readable args.yaml (%w): it is not a gpuwizard run folder", ErrCheckpoint, dir, err)
	}
	cfg, err := ParseConfig(args, raw, Defaults())
	if err != nil {
		return fmt.Errorf("%w: resume: %s has no checkpoint, and its settings cannot be read: %w", ErrCheckpoint, dir, err)
	}
	r.cfg = cfg
	r.cfg.Epochs += r.opts.Extend
	if r.opts.Device != "" {
		r.cfg.Device = r.opts.Device
	}
	r.dir, r.resumed = dir, true
	r.restartNote = dir + " has no checkpoint (it stopped before its first epoch ended): resumed from the start, with its args.yaml"
	return nil
}

// loadResume locks the run folder and reads its last checkpoint.
func (r *runner) loadResume() error {
	dir := r.opts.Resume
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%w: resume: %s is not a run folder: give the folder of the run to resume (runs/NAME)", ErrCheckpoint, dir)
	}
	lock, err := lockRunDir(dir)
	if err != nil {
		return err
	}
	r.lock = lock
	last := filepath.Join(dir, "last.ckpt")
	if _, err := os.Lstat(last); errors.Is(err, os.ErrNotExist) {
		return r.restartEmpty(dir)
	}
	ck, err := LoadCheckpoint(last)
	if err != nil {
		return err // it names the file and what to use instead
	}
	if ck.Finished && r.opts.Extend == 0 {
		return fmt.Errorf("%w: %s finished its %s: add epochs with --extend N", ErrCheckpoint, r.opts.Resume, plural.Count(ck.Config.Epochs, "epoch"))
	}
	r.ck = ck
	r.cfg = ck.Config
	r.cfg.Epochs += r.opts.Extend
	if r.opts.Extend > 0 {
		r.continueSchedule(ck)
	}
	if r.opts.Device != "" {
		r.cfg.Device = r.opts.Device
	}
	r.dir = r.opts.Resume
	r.resumed = true
	return nil
}

func (r *runner) restore() error {
	ck := r.ck
	if ck.Spec != r.net.Spec {
		return fmt.Errorf("%w: the checkpoint's model %+v differs from the dataset's %+v", ErrCheckpoint, ck.Spec, r.net.Spec)
	}
	if err := ck.restore(r.net); err != nil {
		return err
	}
	if err := r.tr.WriteParams(r.params); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if ck.Optim.Kind != "" {
		if err := r.tr.SetState(ck.Optim); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
	}
	r.res.History = ck.History
	r.res.Epochs, r.res.BestEpoch = ck.Epoch, ck.BestEpoch
	r.steps = readSteps(filepath.Join(r.dir, StepsFile), float64(ck.Epoch))
	if n := len(r.steps); n > 0 {
		r.smooth.restart(r.steps[n-1].Loss, r.steps[n-1].Accuracy)
	}
	return nil
}

// checkpoint copies the parameters, statistics and optimiser state from
// the backend and snapshots the run.
func (r *runner) checkpoint(epoch, step, bestEpoch int, bestAcc float64, finished bool) (*Checkpoint, error) {
	if err := r.tr.ReadParams(r.params); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	st, err := r.tr.State()
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	return &Checkpoint{Config: r.cfg, Spec: r.net.Spec, Classes: r.ds.Classes, Params: snapshotParams(r.net),
		States: r.net.States(), Optim: st, Epoch: epoch, GlobalStep: step, BestEpoch: bestEpoch,
		BestValAcc: bestAcc, History: r.res.History, Finished: finished}, nil
}

func (r *runner) loop(ctx context.Context) error {
	cfg, ds, net := r.cfg, r.ds, r.net
	size := ds.ImageSize()
	classes := len(ds.Classes)
	train := data.NewBatcher(ds.Train, size, classes, cfg.Batch)
	spe := train.Steps()
	total := spe * cfg.Epochs
	sched := optim.Schedule{Base: cfg.LR, Kind: cfg.Schedule, WarmupSteps: int(cfg.WarmupEpochs * float64(spe)),
		TotalSteps: total, StepEvery: cfg.StepEvery * spe, Gamma: cfg.Gamma, MinFactor: minLRFactor,
		ContinueStep: cfg.ExtendFrom * spe, ContinueRate: cfg.ExtendLR}
	start, gstep, bestEpoch, bestAcc := 0, 0, 0, -1.0
	if r.ck != nil {
		start, gstep, bestEpoch, bestAcc = r.ck.Epoch, r.ck.GlobalStep, r.ck.BestEpoch, r.ck.BestValAcc
		r.em.send(ctx, Event{Kind: EventLog, Message: fmt.Sprintf("resuming %s after epoch %d of %d", r.dir, start, cfg.Epochs)})
	}
	if r.extend != "" {
		r.em.send(ctx, Event{Kind: EventLog, Message: r.extend})
	}
	r.em.send(ctx, Event{Kind: EventStart, Epochs: cfg.Epochs, Steps: spe, Device: r.device, DeviceReason: r.reason, RunDir: r.dir,
		Epoch: start, X: float64(start), History: append([]EpochResult(nil), r.res.History...), StepHistory: append([]StepPoint(nil), r.steps...),
		Message: fmt.Sprintf("%s on %s: %d training and %s, %d classes, %s, batch %d, %s",
			net.Spec.Kind, ds.Name, ds.Train.Len(), plural.Count(ds.Val.Len(), "validation image"), classes, cfg.Optimizer, cfg.Batch, plural.Count(cfg.Epochs, "epoch"))})
	stepEvery := max(1, spe/maxStepPointsPerEpoch)
	r.saveState(RunRunning, start, bestEpoch, bestAcc, "")
	runStart := time.Now()
	stepsDone := 0
	lastPath := filepath.Join(r.dir, "last.ckpt")
	inflight := make([]launched, r.tr.Depth())
	for i := range inflight {
		inflight[i].labels = make([]int, cfg.Batch)
	}
	inHead := 0
	graphSaid := false
	for epoch := start; epoch < cfg.Epochs; epoch++ {
		train.Shuffle(cfg.Seed*1000003 + int64(epoch))
		epStart := time.Now()
		epochStep := gstep // a stopped epoch is redone from here on resume
		var lossSum float64
		var correct, seen int
		var lr float32
		// Steps run ahead of their results (Trainer.Depth in flight): each
		// launched step keeps what its results are judged against.
		collect := func() error {
			loss, logits, err := r.tr.Collect()
			if on, gerr := r.tr.Graphs(); !on && gerr != nil && !graphSaid {
				graphSaid = true
				r.em.send(ctx, Event{Kind: EventLog, Message: "CUDA graphs failed, so every kernel of every step is queued: " + gerr.Error()})
			}
			ls := &inflight[inHead]
			inHead = (inHead + 1) % len(inflight)
			if err != nil {
				return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, ls.step+1, r.device, err)
			}
			if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
				return fmt.Errorf("%w: the loss became %v at epoch %d step %d: lower the learning rate (lr %g)", ErrDiverge, loss, epoch+1, ls.step+1, cfg.LR)
			}
			stepsDone++
			lossSum += float64(loss) * float64(ls.valid)
			right := 0
			for k := 0; k < ls.valid; k++ {
				if argmax(logits[k*classes:(k+1)*classes]) == ls.labels[k] {
					right++
				}
			}
			correct += right
			seen += ls.valid
			sl, sa := r.smooth.add(float64(loss), float64(right)/float64(max(ls.valid, 1)))
			x := float64(epoch) + float64(ls.step+1)/float64(spe)
			if (ls.step+1)%stepEvery == 0 || ls.step+1 == spe {
				r.steps = append(r.steps, StepPoint{X: x, Loss: sl, Accuracy: sa, LR: float64(ls.lr)})
			}
			el := time.Since(epStart).Seconds()
			perStep := time.Since(runStart) / time.Duration(stepsDone)
			r.em.send(ctx, Event{Kind: EventStep, Epoch: epoch + 1, Epochs: cfg.Epochs, Step: ls.step + 1, Steps: spe, GlobalStep: ls.gstep,
				Loss: lossSum / float64(seen), Accuracy: float64(correct) / float64(seen), LR: float64(ls.lr),
				ImagesPerSec: perSecond(float64(seen), el), ETA: perStep * time.Duration(max(total-ls.gstep, 0)), Device: r.device,
				GPU: r.proof.sample(ctx, r.res), X: x, SmoothLoss: sl, SmoothAccuracy: sa})
			return nil
		}
		drain := func() error {
			for r.tr.Pending() > 0 {
				if err := collect(); err != nil {
					return err
				}
			}
			return nil
		}
		for s := 0; train.Next(); s++ {
			w0 := time.Now()
			goOn := r.opts.Control.wait(ctx)
			if paused := time.Since(w0); paused > 10*time.Millisecond {
				// Time paused is not training time: speeds and ETAs leave it out.
				epStart, runStart = epStart.Add(paused), runStart.Add(paused)
			}
			if !goOn {
				err := drain()
				if err == nil {
					var ck *Checkpoint
					if ck, err = r.checkpoint(epoch, epochStep, bestEpoch, bestAcc, false); err == nil {
						err = SaveCheckpoint(r.opts.FS, lastPath, ck)
					}
				}
				if err != nil {
					return fmt.Errorf("trainer: stopping: %w", err)
				}
				r.res.Stopped = "stopped by the user"
				r.res.Epochs = epoch
				r.steps = dropAfter(r.steps, float64(epoch)) // the stopped epoch is redone on resume
				return ErrStopped
			}
			if r.tr.Pending() == r.tr.Depth() {
				if err := collect(); err != nil {
					return err
				}
			}
			lr = sched.Rate(gstep)
			ls := &inflight[(inHead+r.tr.Pending())%len(inflight)]
			ls.step, ls.lr, ls.valid = s, lr, train.Valid
			for k := 0; k < train.Valid; k++ {
				ls.labels[k] = int(ds.Train.Labels[train.Idx[k]])
			}
			if err := r.tr.Launch(train.X, train.Y, lr); err != nil {
				return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, s+1, r.device, err)
			}
			gstep++
			ls.gstep = gstep
		}
		if err := drain(); err != nil {
			return err
		}
		val := r.evaluate(ds.Val, "val")
		er := EpochResult{Epoch: epoch + 1, Seconds: time.Since(epStart).Seconds(), TrainLoss: lossSum / float64(max(seen, 1)),
			TrainAcc: float64(correct) / float64(max(seen, 1)), ValLoss: val.Loss, ValAcc: val.Accuracy, ValTop5: val.Top5,
			LR: float64(lr), ImagesPerSec: perSecond(float64(seen), time.Since(epStart).Seconds())}
		r.res.History = append(r.res.History, er)
		r.res.Epochs = epoch + 1
		best := val.Accuracy > bestAcc
		if best {
			bestAcc, bestEpoch = val.Accuracy, epoch+1
			r.res.BestEpoch = bestEpoch
		}
		finished := epoch+1 == cfg.Epochs
		ck, err := r.checkpoint(epoch+1, gstep, bestEpoch, bestAcc, finished)
		if err != nil {
			return err
		}
		if err := SaveCheckpoint(r.opts.FS, lastPath, ck); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
		if best {
			if err := SaveCheckpoint(r.opts.FS, filepath.Join(r.dir, "best.ckpt"), ck); err != nil {
				return fmt.Errorf("trainer: %w", err)
			}
		}
		if err := writeAtomic(r.opts.FS, filepath.Join(r.dir, "results.csv"), resultsCSV(r.res.History)); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
		r.steps = thinSteps(r.steps)
		if err := writeAtomic(r.opts.FS, filepath.Join(r.dir, StepsFile), stepsCSV(r.steps)); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
		r.saveState(RunRunning, epoch+1, bestEpoch, bestAcc, "")
		r.em.send(ctx, Event{Kind: EventEpoch, Epoch: epoch + 1, Epochs: cfg.Epochs, Steps: spe, Step: spe, GlobalStep: gstep, X: float64(epoch + 1),
			Loss: er.TrainLoss, Accuracy: er.TrainAcc, ValLoss: er.ValLoss, ValAccuracy: er.ValAcc, LR: er.LR,
			ImagesPerSec: er.ImagesPerSec, Best: best, Device: r.device, GPU: r.proof.sample(ctx, r.res),
			ETA: time.Since(runStart) / time.Duration(max(stepsDone, 1)) * time.Duration(max(total-gstep, 0))})
		if cfg.Patience > 0 && epoch+1-bestEpoch >= cfg.Patience && !finished {
			r.res.Stopped = fmt.Sprintf("early stopping: no better validation accuracy for %s (best %.2f%% at epoch %d)", plural.Count(cfg.Patience, "epoch"), 100*bestAcc, bestEpoch)
			r.em.send(ctx, Event{Kind: EventLog, Message: r.res.Stopped})
			break
		}
	}
	return r.finalMetrics()
}

// finalMetrics evaluates the best checkpoint on validation and test.
func (r *runner) finalMetrics() error {
	ck, err := LoadCheckpoint(filepath.Join(r.dir, "best.ckpt"))
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if r.res.Val, r.res.Test, err = r.measure(ck); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(r.res, "", "  ")
	return writeAtomic(r.opts.FS, filepath.Join(r.dir, "results.json"), append(b, '\n'))
}

// measure loads a checkpoint's model into the backend and evaluates it on
// the validation split and, when there is one, the test split.
func (r *runner) measure(ck *Checkpoint) (val, test *Metrics, err error) {
	if err := ck.restore(r.net); err != nil {
		return nil, nil, fmt.Errorf("trainer: %w", err)
	}
	if err := r.tr.WriteParams(r.params); err != nil {
		return nil, nil, fmt.Errorf("trainer: %w", err)
	}
	v := r.evaluate(r.ds.Val, "val")
	if r.ds.Test != nil && r.ds.Test.Len() > 0 {
		t := r.evaluate(r.ds.Test, "test")
		test = &t
	}
	return &v, test, nil
}

// minLRFactor is where a cosine schedule ends, as a share of the peak rate.
const minLRFactor = 0.01

func (r *runner) evaluate(s *data.Split, name string) Metrics {
	classes := len(r.ds.Classes)
	acc := newAccumulator(classes)
	b := data.NewBatcher(s, r.ds.ImageSize(), classes, r.cfg.Batch)
	b.Rewind()
	for b.Next() {
		logits, err := r.tr.Predict(b.X)
		if err != nil {
			break
		}
		for k := 0; k < b.Valid; k++ {
			acc.add(logits[k*classes:(k+1)*classes], int(s.Labels[b.Idx[k]]))
		}
	}
	return acc.metrics(name, r.ds.Classes)
}

// launched is what a step in flight is judged against when its results
// come: its place, rate, and the labels of its batch.
type launched struct {
	step, gstep, valid int
	lr                 float32
	labels             []int
}

func argmax(v []float32) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// resultsCSV writes Ultralytics-style columns, one row per epoch.
func resultsCSV(h []EpochResult) []byte {
	var b strings.Builder
	b.WriteString("epoch,time,train/loss,train/accuracy,val/loss,metrics/accuracy_top1,metrics/accuracy_top5,lr/pg0,images_per_s\n")
	var elapsed float64
	for _, e := range h {
		elapsed += e.Seconds
		fmt.Fprintf(&b, "%d,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.8f,%.1f\n", e.Epoch, elapsed, e.TrainLoss, e.TrainAcc, e.ValLoss, e.ValAcc, e.ValTop5, e.LR, e.ImagesPerSec)
	}
	return []byte(b.String())
}

// Estimate is a measured time per epoch and the device it was measured
// on.
type Estimate struct {
	PerEpoch time.Duration
	Device   string // "cpu", "cuda:0", ...
	Reason   string // why that device (as a run would say)
	Batch    int    // the batch measured (a GPU may need a smaller one)
}

// EstimateEpochOn times a few training steps of the model cfg and ds
// would build, on random data, on the device a run with opts would pick
// (the GPU when Automatic picks it), and returns the expected time per
// epoch.
func EstimateEpochOn(ctx context.Context, cfg Config, ds *data.Dataset, opts Options) (Estimate, error) {
	r := &runner{cfg: cfg, ds: ds, opts: opts, em: &emitter{}}
	if err := r.cfg.Validate(); err != nil {
		return Estimate{}, err
	}
	spec, err := r.spec()
	if err != nil {
		return Estimate{}, err
	}
	if err := r.selectDevice(ctx); err != nil {
		return Estimate{}, err
	}
	defer func() {
		if r.be != nil {
			r.be.Close()
		}
	}()
	if err := r.build(ctx, spec); err != nil {
		return Estimate{}, err
	}
	x, y := r.net.RandomBatch(rand.New(rand.NewSource(cfg.Seed)))
	const steps = 3
	var elapsed time.Duration
	for i := 0; i <= steps; i++ {
		if ctx.Err() != nil {
			return Estimate{}, ctx.Err()
		}
		t0 := time.Now()
		if _, _, err := r.tr.Forward(x, y); err != nil {
			return Estimate{}, fmt.Errorf("trainer: %w", err)
		}
		if i > 0 { // the first step warms up (and captures the CUDA graph)
			elapsed += time.Since(t0)
		}
	}
	per := (ds.Train.Len() + r.cfg.Batch - 1) / r.cfg.Batch
	return Estimate{PerEpoch: elapsed / steps * time.Duration(per), Device: r.device, Reason: r.reason, Batch: r.cfg.Batch}, nil
}

// perSecond is n per second over seconds, 0 when no time was measured:
// Windows' clock advances in steps of up to 15.6 ms, so a fast step can
// take 0 s, and n/0 (+Inf) is no number JSON can carry.
func perSecond(n, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return n / seconds
}
