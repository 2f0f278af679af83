package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/optim"
)

// detLoop is a detection run's epoch loop: the classifiers' loop (loop.go)
// with a detector's batches (targets assigned per batch), its loss terms
// per step, and mAP on the validation split per epoch. The best epoch is
// the one of best fitness, 0.1·mAP50 + 0.9·mAP50-95 (Ultralytics'), kept
// in the checkpoint's BestValAcc.
type detLoop struct {
	cfg         Config
	ds          *detect.Dataset
	s           *session
	d           *rundir
	em          *emitter
	ctl         *Control
	res         *Result
	proof       *proofSampler
	steps       []StepPoint
	smooth      smoother
	start       int
	gstep       int
	bestEpoch   int
	bestFit     float64
	valLoss     [3]float64 // the last evaluation's loss terms (box, class, objectness)
	train, val  *detBatcher
	g           detect.Grid
	spe, total  int
	stepEvery   int
	sched       optim.Schedule
	runStart    time.Time
	stepsDone   int
	ep          detTally
	resumeNotes []string
}

// detTally adds up an epoch's steps.
type detTally struct {
	start               time.Time
	firstStep           int
	loss, box, cls, obj float64
	steps, seen         int
	lr                  float32
}

// fitness is what picks the best epoch.
func fitness(m *detect.Metrics) float64 { return 0.1*m.MAP50 + 0.9*m.MAP5095 }

func newDetLoop(cfg Config, ds *detect.Dataset, s *session, d *rundir, em *emitter, opts Options, res *Result) *detLoop {
	h, w := s.spec.Grid()
	g := detect.Grid{H: h, W: w, Stride: ds.Size / h}
	l := &detLoop{cfg: cfg, ds: ds, s: s, d: d, em: em, ctl: opts.Control, res: res, bestFit: -1, g: g}
	l.train = newDetBatcher(ds.Train, ds.Size, ds.Channels, s.batch, g, true)
	l.val = newDetBatcher(ds.Val, ds.Size, ds.Channels, s.batch, g, false)
	l.spe = l.train.Steps()
	l.total = l.spe * cfg.Epochs
	l.stepEvery = max(1, l.spe/maxStepPointsPerEpoch)
	l.sched = optim.Schedule{Base: cfg.LR, Kind: cfg.Schedule, WarmupSteps: int(cfg.WarmupEpochs * float64(l.spe)),
		TotalSteps: l.total, StepEvery: cfg.StepEvery * l.spe, Gamma: cfg.Gamma, MinFactor: minLRFactor,
		ContinueStep: cfg.ExtendFrom * l.spe, ContinueRate: cfg.ExtendLR}
	if s.device != "cpu" {
		res.GPU = &GPUProof{Device: s.device}
		if opts.Sample != nil {
			l.proof = &proofSampler{read: opts.Sample, ordinal: s.ordinal}
		} else {
			res.GPU.Error = "not sampled: no NVML sampler was given"
		}
	}
	return l
}

// restore goes on from a resumed run's checkpoint.
func (l *detLoop) restore(ck *Checkpoint) error {
	if err := l.s.load(ck, true); err != nil {
		return err
	}
	l.res.History = ck.History
	l.res.Epochs, l.res.BestEpoch = ck.Epoch, ck.BestEpoch
	l.start, l.gstep, l.bestEpoch, l.bestFit = ck.Epoch, ck.GlobalStep, ck.BestEpoch, ck.BestValAcc
	l.steps = l.d.readSteps(float64(ck.Epoch))
	if n := len(l.steps); n > 0 {
		l.smooth.restart(l.steps[n-1].Loss, 0)
	}
	l.resumeNotes = append(l.resumeNotes, fmt.Sprintf("resuming %s after epoch %d of %d", l.d.dir, ck.Epoch, l.cfg.Epochs))
	return nil
}

// note is said before the start event.
func (l *detLoop) note(m string) { l.resumeNotes = append(l.resumeNotes, m) }

// run trains the remaining epochs, then measures the best model.
func (l *detLoop) run(ctx context.Context) error {
	for _, m := range l.resumeNotes {
		l.em.send(ctx, Event{Kind: EventLog, Message: m})
	}
	cfg, ds := l.cfg, l.ds
	l.em.send(ctx, Event{Kind: EventStart, Epochs: cfg.Epochs, Steps: l.spe, Device: l.s.device, DeviceReason: l.s.reason, RunDir: l.d.dir,
		Epoch: l.start, X: float64(l.start), History: append([]EpochResult(nil), l.res.History...), StepHistory: append([]StepPoint(nil), l.steps...),
		Message: fmt.Sprintf("%s on %s: %d training and %s at %d px, %s, %s, batch %d, %s",
			l.s.spec.Kind, ds.Name, ds.Train.Len(), plural.Count(ds.Val.Len(), "validation image"), ds.Size, plural.Count(len(ds.Classes), "class"),
			cfg.Optimizer, l.s.batch, plural.Count(cfg.Epochs, "epoch"))})
	l.state(RunRunning, l.start, "")
	l.runStart = time.Now()
	for epoch := l.start; epoch < cfg.Epochs; epoch++ {
		done, err := l.epoch(ctx, epoch)
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	return l.finalMetrics()
}

// epoch trains and records one epoch; true when patience ends the run.
func (l *detLoop) epoch(ctx context.Context, epoch int) (bool, error) {
	l.train.Shuffle(l.cfg.Seed*1000003 + int64(epoch))
	l.ep = detTally{start: time.Now(), firstStep: l.gstep}
	for s := 0; l.train.Next(); s++ {
		if err := l.launch(ctx, epoch, s); err != nil {
			return false, err
		}
	}
	if err := l.drain(ctx, epoch); err != nil {
		return false, err
	}
	return l.endEpoch(ctx, epoch)
}

// launch launches step s once the control lets it go on.
func (l *detLoop) launch(ctx context.Context, epoch, s int) error {
	w0 := time.Now()
	goOn := l.ctl.wait(ctx)
	if paused := time.Since(w0); paused > 10*time.Millisecond {
		l.ep.start, l.runStart = l.ep.start.Add(paused), l.runStart.Add(paused)
	}
	if !goOn {
		return l.stop(ctx, epoch)
	}
	if l.s.full() {
		if err := l.collect(ctx, epoch); err != nil {
			return err
		}
	}
	l.ep.lr = l.sched.Rate(l.gstep)
	ls := l.s.next()
	ls.step, ls.lr, ls.valid = s, l.ep.lr, l.train.Valid
	if err := l.s.launch(l.train.X, l.train.Y, l.ep.lr); err != nil {
		return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, s+1, l.s.device, err)
	}
	l.gstep++
	ls.gstep = l.gstep
	return nil
}

// stop saves the run as it was when the epoch began and ends it.
func (l *detLoop) stop(ctx context.Context, epoch int) error {
	err := l.drain(ctx, epoch)
	if err == nil {
		var ck *Checkpoint
		if ck, err = l.checkpoint(epoch, l.ep.firstStep, false); err == nil {
			err = SaveCheckpoint(l.d.fs, l.d.path("last.ckpt"), ck)
		}
	}
	if err != nil {
		return fmt.Errorf("trainer: stopping: %w", err)
	}
	l.res.Stopped = "stopped by the user"
	l.res.Epochs = epoch
	l.steps = dropAfter(l.steps, float64(epoch))
	return ErrStopped
}

func (l *detLoop) drain(ctx context.Context, epoch int) error {
	for l.s.pending() > 0 {
		if err := l.collect(ctx, epoch); err != nil {
			return err
		}
	}
	return nil
}

// collect takes the oldest step's loss and its three terms, adds a point
// to the curves and reports the step.
func (l *detLoop) collect(ctx context.Context, epoch int) error {
	loss, terms, ls, err := l.s.collect()
	if err != nil {
		return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, ls.step+1, l.s.device, err)
	}
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return fmt.Errorf("%w: the loss became %v at epoch %d step %d: lower the learning rate (lr %g)", ErrDiverge, loss, epoch+1, ls.step+1, l.cfg.LR)
	}
	l.stepsDone++
	t := &l.ep
	t.loss += float64(loss)
	t.box += float64(terms[0])
	t.cls += float64(terms[1])
	t.obj += float64(terms[2])
	t.steps++
	t.seen += ls.valid
	sl, _ := l.smooth.add(float64(loss), 0)
	x := float64(epoch) + float64(ls.step+1)/float64(l.spe)
	if (ls.step+1)%l.stepEvery == 0 || ls.step+1 == l.spe {
		l.steps = append(l.steps, StepPoint{X: x, Loss: sl, LR: float64(ls.lr)})
	}
	el := time.Since(t.start).Seconds()
	perStep := time.Since(l.runStart) / time.Duration(l.stepsDone)
	n := float64(t.steps)
	l.em.send(ctx, Event{Kind: EventStep, Epoch: epoch + 1, Epochs: l.cfg.Epochs, Step: ls.step + 1, Steps: l.spe, GlobalStep: ls.gstep,
		Loss: t.loss / n, BoxLoss: t.box / n, ClsLoss: t.cls / n, ObjLoss: t.obj / n, LR: float64(ls.lr),
		ImagesPerSec: perSecond(float64(t.seen), el), ETA: perStep * time.Duration(max(l.total-ls.gstep, 0)), Device: l.s.device,
		GPU: l.proof.sample(ctx, l.res), X: x, SmoothLoss: sl})
	return nil
}

// endEpoch validates the epoch's model (mAP), saves it, rewrites the
// curves and reports the epoch; true when patience ends the run.
func (l *detLoop) endEpoch(ctx context.Context, epoch int) (bool, error) {
	cfg, t := l.cfg, l.ep
	val, err := l.evaluate(l.val, "val")
	if err != nil {
		return false, err
	}
	n := float64(max(t.steps, 1))
	er := EpochResult{Epoch: epoch + 1, Seconds: time.Since(t.start).Seconds(), TrainLoss: t.loss / n,
		BoxLoss: t.box / n, ClsLoss: t.cls / n, ObjLoss: t.obj / n, MAP50: val.MAP50, MAP5095: val.MAP5095,
		ValLoss: l.valLoss[0] + l.valLoss[1] + l.valLoss[2], ValBoxLoss: l.valLoss[0], ValClsLoss: l.valLoss[1], ValObjLoss: l.valLoss[2],
		LR: float64(t.lr), ImagesPerSec: perSecond(float64(t.seen), time.Since(t.start).Seconds())}
	l.res.History = append(l.res.History, er)
	l.res.Epochs = epoch + 1
	best := fitness(&val) > l.bestFit
	if best {
		l.bestFit, l.bestEpoch = fitness(&val), epoch+1
		l.res.BestEpoch = l.bestEpoch
	}
	finished := epoch+1 == cfg.Epochs
	if err := l.record(epoch, best, finished); err != nil {
		return false, err
	}
	l.em.send(ctx, Event{Kind: EventEpoch, Epoch: epoch + 1, Epochs: cfg.Epochs, Steps: l.spe, Step: l.spe, GlobalStep: l.gstep, X: float64(epoch + 1),
		Loss: er.TrainLoss, ValLoss: er.ValLoss, BoxLoss: er.BoxLoss, ClsLoss: er.ClsLoss, ObjLoss: er.ObjLoss, MAP50: er.MAP50, MAP5095: er.MAP5095, LR: er.LR,
		ImagesPerSec: er.ImagesPerSec, Best: best, Device: l.s.device, GPU: l.proof.sample(ctx, l.res),
		ETA: time.Since(l.runStart) / time.Duration(max(l.stepsDone, 1)) * time.Duration(max(l.total-l.gstep, 0))})
	if cfg.Patience > 0 && epoch+1-l.bestEpoch >= cfg.Patience && !finished {
		l.res.Stopped = fmt.Sprintf("early stopping: no better validation mAP for %s (best mAP50-95 %.3f at epoch %d)", plural.Count(cfg.Patience, "epoch"), l.bestMAP(), l.bestEpoch)
		l.em.send(ctx, Event{Kind: EventLog, Message: l.res.Stopped})
		return true, nil
	}
	return false, nil
}

// bestMAP is the best epoch's mAP50-95.
func (l *detLoop) bestMAP() float64 {
	for _, h := range l.res.History {
		if h.Epoch == l.bestEpoch {
			return h.MAP5095
		}
	}
	return 0
}

// evaluate runs the evaluation program over a split and scores its
// detections (detect.Evaluate, on the canvas: the letterbox scales both
// boxes alike, so IoUs are the original image's); l.valLoss gets the
// split's loss terms.
func (l *detLoop) evaluate(b *detBatcher, name string) (detect.Metrics, error) {
	preds, truths, err := evaluateDetector(l.s, b, len(l.ds.Classes), &l.valLoss)
	if err != nil {
		return detect.Metrics{}, fmt.Errorf("trainer: evaluating the %s split on %s: %w", name, l.s.device, err)
	}
	m := detect.Evaluate(preds, truths, l.ds.Classes)
	m.Split = name
	return m, nil
}

// record saves the epoch's checkpoints, curves and state.
func (l *detLoop) record(epoch int, best, finished bool) error {
	ck, err := l.checkpoint(epoch+1, l.gstep, finished)
	if err != nil {
		return err
	}
	if err := l.d.saveCheckpoint("last.ckpt", ck); err != nil {
		return err
	}
	if best {
		if err := l.d.saveCheckpoint("best.ckpt", ck); err != nil {
			return err
		}
	}
	l.steps = thinSteps(l.steps)
	if err := l.d.writeCurves(l.res.History, l.steps); err != nil {
		return err
	}
	l.state(RunRunning, epoch+1, "")
	return nil
}

func (l *detLoop) checkpoint(epoch, step int, finished bool) (*Checkpoint, error) {
	params, states, st, err := l.s.save()
	if err != nil {
		return nil, err
	}
	return &Checkpoint{Config: l.cfg, Spec: l.s.spec, Classes: l.ds.Classes, Params: params,
		States: states, Optim: st, Epoch: epoch, GlobalStep: step, BestEpoch: l.bestEpoch,
		BestValAcc: l.bestFit, History: l.res.History, Finished: finished}, nil
}

// finalMetrics evaluates the best checkpoint on validation and writes
// results.json.
func (l *detLoop) finalMetrics() error {
	ck, err := LoadCheckpoint(l.d.path("best.ckpt"))
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if err := l.s.load(ck, false); err != nil {
		return err
	}
	m, err := l.evaluate(l.val, "val")
	if err != nil {
		return err
	}
	l.res.Detect = &m
	return l.d.writeResult(l.res)
}

func (l *detLoop) state(state string, epoch int, msg string) {
	l.d.saveState(runState{State: state, Message: msg, Epoch: epoch, Epochs: l.cfg.Epochs, BestEpoch: l.bestEpoch,
		BestAcc: l.bestMAP(), Model: l.s.spec.Kind, Device: l.s.device, Data: l.cfg.Data})
}

func (l *detLoop) finalState(err error) {
	l.bestEpoch = l.res.BestEpoch
	switch {
	case err == nil:
		l.state(RunFinished, l.res.Epochs, l.res.Stopped)
	case errors.Is(err, ErrStopped):
		l.state(RunStopped, l.res.Epochs, l.res.Stopped)
	default:
		l.state(stateFailed, l.res.Epochs, err.Error())
	}
}

// evaluateDetector runs session s's evaluation program over batcher b's
// pass and returns each image's detections (canvas pixels, NMS at
// validation thresholds) and objects. When loss is not nil it gets the
// box, class and objectness terms of the loss on the pass (means per
// batch, as the training loss's), taken on the host from the heads.
func evaluateDetector(s *session, b *detBatcher, classes int, loss *[3]float64) ([][]detect.Detection, [][]detect.Object, error) {
	per := (5 + classes) * b.g.H * b.g.W
	preds := make([][]detect.Detection, b.s.Len())
	truths := make([][]detect.Object, b.s.Len())
	vl := valLoss{d: s.spec.DetGeometry(b.batch)}
	b.Rewind()
	for b.Next() {
		head, err := s.predict(b.X)
		if err != nil {
			return nil, nil, err
		}
		for k := 0; k < b.Valid; k++ {
			i := b.Idx[k]
			im := &b.s.Images[i]
			preds[i] = im.Letterbox.OnImage(detect.Detections(head[k*per:(k+1)*per], classes, b.g, b.size, detect.ValConf, detect.ValIoU, detect.MaxPerImage))
			truths[i] = im.Objects
		}
		if loss != nil {
			vl.add(head, b.Y)
		}
	}
	if loss != nil {
		*loss = vl.mean()
	}
	return preds, truths, nil
}

// valLoss sums the loss terms of evaluation batches.
type valLoss struct {
	d       exec.Det
	terms   []float32
	sum     [3]float64
	batches int
}

// add takes one batch's heads and targets.
func (v *valLoss) add(head, tgt []float32) {
	if v.terms == nil {
		v.terms = make([]float32, 3*v.d.Cells())
	}
	sum := exec.DetLossSums(head, tgt, v.terms, v.d)
	for i := range sum {
		v.sum[i] += sum[i]
	}
	v.batches++
}

// mean is the terms' mean per batch.
func (v *valLoss) mean() [3]float64 {
	n := float64(max(v.batches, 1))
	return [3]float64{v.sum[0] / n, v.sum[1] / n, v.sum[2] / n}
}
