package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/optim"
)

// minLRFactor is where a cosine schedule ends, as a share of the peak rate.
const minLRFactor = 0.01

// loop is a run's epoch loop: it trains the session on the dataset's
// training split, evaluates and records each epoch in the run folder, and
// reports on events.
type loop struct {
	cfg   Config
	ds    *data.Dataset
	s     *session
	d     *rundir
	em    *emitter
	ctl   *Control
	res   *Result
	proof *proofSampler
	// The curves: the smoothed steps so far (steps.csv), and the smoother.
	steps  []StepPoint
	smooth smoother
	// Where the run is.
	start, gstep, bestEpoch int
	bestAcc                 float64
	// The schedule, fixed at the start.
	train       *data.Batcher
	spe, total  int // steps per epoch, and in all
	stepEvery   int // a step point every stepEvery steps
	sched       optim.Schedule
	runStart    time.Time
	stepsDone   int
	ep          epochTally
	resumeNotes []string // said before the start event
}

// epochTally adds up an epoch's steps as their results come.
type epochTally struct {
	start         time.Time
	firstStep     int // the global step the epoch began at (a stopped epoch is redone from it)
	lossSum       float64
	correct, seen int
	lr            float32
}

// newLoop sets a run's schedule. res is the run's result so far.
func newLoop(cfg Config, ds *data.Dataset, s *session, d *rundir, em *emitter, opts Options, res *Result) *loop {
	l := &loop{cfg: cfg, ds: ds, s: s, d: d, em: em, ctl: opts.Control, res: res, bestAcc: -1}
	l.train = data.NewBatcher(ds.Train, ds.ImageSize(), len(ds.Classes), s.batch)
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

// restore goes on from a resumed run's checkpoint: the model and the
// optimiser on the device, the history and the curves.
func (l *loop) restore(ck *Checkpoint) error {
	if err := l.s.load(ck, true); err != nil {
		return err
	}
	l.res.History = ck.History
	l.res.Epochs, l.res.BestEpoch = ck.Epoch, ck.BestEpoch
	l.start, l.gstep, l.bestEpoch, l.bestAcc = ck.Epoch, ck.GlobalStep, ck.BestEpoch, ck.BestValAcc
	l.steps = l.d.readSteps(float64(ck.Epoch))
	if n := len(l.steps); n > 0 {
		l.smooth.restart(l.steps[n-1].Loss, l.steps[n-1].Accuracy)
	}
	l.resumeNotes = append(l.resumeNotes, fmt.Sprintf("resuming %s after epoch %d of %d", l.d.dir, ck.Epoch, l.cfg.Epochs))
	return nil
}

// note is said before the start event.
func (l *loop) note(m string) { l.resumeNotes = append(l.resumeNotes, m) }

// run trains the remaining epochs, then measures the best model.
func (l *loop) run(ctx context.Context) error {
	for _, m := range l.resumeNotes {
		l.em.send(ctx, Event{Kind: EventLog, Message: m})
	}
	cfg, ds := l.cfg, l.ds
	l.em.send(ctx, Event{Kind: EventStart, Epochs: cfg.Epochs, Steps: l.spe, Device: l.s.device, DeviceReason: l.s.reason, RunDir: l.d.dir,
		Epoch: l.start, X: float64(l.start), History: append([]EpochResult(nil), l.res.History...), StepHistory: append([]StepPoint(nil), l.steps...),
		Message: fmt.Sprintf("%s on %s: %d training and %s, %d classes, %s, batch %d, %s",
			l.s.spec.Kind, ds.Name, ds.Train.Len(), plural.Count(ds.Val.Len(), "validation image"), len(ds.Classes), cfg.Optimizer, l.s.batch, plural.Count(cfg.Epochs, "epoch"))})
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
func (l *loop) epoch(ctx context.Context, epoch int) (bool, error) {
	l.train.Shuffle(l.cfg.Seed*1000003 + int64(epoch))
	l.ep = epochTally{start: time.Now(), firstStep: l.gstep}
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

// launch launches step s of the epoch, once the control lets it go on (a
// pause waits; a stop saves where the epoch began and ends the run).
func (l *loop) launch(ctx context.Context, epoch, s int) error {
	w0 := time.Now()
	goOn := l.ctl.wait(ctx)
	if paused := time.Since(w0); paused > 10*time.Millisecond {
		// Time paused is not training time: speeds and ETAs leave it out.
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
	for k := 0; k < l.train.Valid; k++ {
		ls.labels[k] = int(l.ds.Train.Labels[l.train.Idx[k]])
	}
	if err := l.s.launch(l.train.X, l.train.Y, l.ep.lr); err != nil {
		return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, s+1, l.s.device, err)
	}
	l.gstep++
	ls.gstep = l.gstep
	return nil
}

// stop saves the run as it was when the epoch began (the stopped epoch is
// redone on resume) and ends it with ErrStopped.
func (l *loop) stop(ctx context.Context, epoch int) error {
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

// drain collects every step in flight.
func (l *loop) drain(ctx context.Context, epoch int) error {
	for l.s.pending() > 0 {
		if err := l.collect(ctx, epoch); err != nil {
			return err
		}
	}
	return nil
}

// collect takes the oldest step's results: it scores them against the
// labels the step was launched with, adds a point to the curves and
// reports the step.
func (l *loop) collect(ctx context.Context, epoch int) error {
	loss, logits, ls, err := l.s.collect()
	if err != nil {
		return fmt.Errorf("trainer: epoch %d step %d on %s: %w", epoch+1, ls.step+1, l.s.device, err)
	}
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return fmt.Errorf("%w: the loss became %v at epoch %d step %d: lower the learning rate (lr %g)", ErrDiverge, loss, epoch+1, ls.step+1, l.cfg.LR)
	}
	classes := len(l.ds.Classes)
	l.stepsDone++
	t := &l.ep
	t.lossSum += float64(loss) * float64(ls.valid)
	right := 0
	for k := 0; k < ls.valid; k++ {
		if argmax(logits[k*classes:(k+1)*classes]) == ls.labels[k] {
			right++
		}
	}
	t.correct += right
	t.seen += ls.valid
	sl, sa := l.smooth.add(float64(loss), float64(right)/float64(max(ls.valid, 1)))
	x := float64(epoch) + float64(ls.step+1)/float64(l.spe)
	if (ls.step+1)%l.stepEvery == 0 || ls.step+1 == l.spe {
		l.steps = append(l.steps, StepPoint{X: x, Loss: sl, Accuracy: sa, LR: float64(ls.lr)})
	}
	el := time.Since(t.start).Seconds()
	perStep := time.Since(l.runStart) / time.Duration(l.stepsDone)
	l.em.send(ctx, Event{Kind: EventStep, Epoch: epoch + 1, Epochs: l.cfg.Epochs, Step: ls.step + 1, Steps: l.spe, GlobalStep: ls.gstep,
		Loss: t.lossSum / float64(t.seen), Accuracy: float64(t.correct) / float64(t.seen), LR: float64(ls.lr),
		ImagesPerSec: perSecond(float64(t.seen), el), ETA: perStep * time.Duration(max(l.total-ls.gstep, 0)), Device: l.s.device,
		GPU: l.proof.sample(ctx, l.res), X: x, SmoothLoss: sl, SmoothAccuracy: sa})
	return nil
}

// endEpoch validates the epoch's model, saves it (last, and best when it
// is), rewrites the curves and reports the epoch; true when patience ends
// the run.
func (l *loop) endEpoch(ctx context.Context, epoch int) (bool, error) {
	cfg, t := l.cfg, l.ep
	val, err := l.s.evaluate(l.ds.Val, l.ds.ImageSize(), l.ds.Classes, "val")
	if err != nil {
		return false, err
	}
	er := EpochResult{Epoch: epoch + 1, Seconds: time.Since(t.start).Seconds(), TrainLoss: t.lossSum / float64(max(t.seen, 1)),
		TrainAcc: float64(t.correct) / float64(max(t.seen, 1)), ValLoss: val.Loss, ValAcc: val.Accuracy, ValTop5: val.Top5,
		LR: float64(t.lr), ImagesPerSec: perSecond(float64(t.seen), time.Since(t.start).Seconds())}
	l.res.History = append(l.res.History, er)
	l.res.Epochs = epoch + 1
	best := val.Accuracy > l.bestAcc
	if best {
		l.bestAcc, l.bestEpoch = val.Accuracy, epoch+1
		l.res.BestEpoch = l.bestEpoch
	}
	finished := epoch+1 == cfg.Epochs
	if err := l.record(epoch, best, finished); err != nil {
		return false, err
	}
	l.em.send(ctx, Event{Kind: EventEpoch, Epoch: epoch + 1, Epochs: cfg.Epochs, Steps: l.spe, Step: l.spe, GlobalStep: l.gstep, X: float64(epoch + 1),
		Loss: er.TrainLoss, Accuracy: er.TrainAcc, ValLoss: er.ValLoss, ValAccuracy: er.ValAcc, LR: er.LR,
		ImagesPerSec: er.ImagesPerSec, Best: best, Device: l.s.device, GPU: l.proof.sample(ctx, l.res),
		ETA: time.Since(l.runStart) / time.Duration(max(l.stepsDone, 1)) * time.Duration(max(l.total-l.gstep, 0))})
	if cfg.Patience > 0 && epoch+1-l.bestEpoch >= cfg.Patience && !finished {
		l.res.Stopped = fmt.Sprintf("early stopping: no better validation accuracy for %s (best %.2f%% at epoch %d)", plural.Count(cfg.Patience, "epoch"), 100*l.bestAcc, l.bestEpoch)
		l.em.send(ctx, Event{Kind: EventLog, Message: l.res.Stopped})
		return true, nil
	}
	return false, nil
}

// record saves the epoch's checkpoints, curves and state.
func (l *loop) record(epoch int, best, finished bool) error {
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

// checkpoint snapshots the run: the model and optimiser state from the
// device, and where the run is.
func (l *loop) checkpoint(epoch, step int, finished bool) (*Checkpoint, error) {
	params, states, st, err := l.s.save()
	if err != nil {
		return nil, err
	}
	return &Checkpoint{Config: l.cfg, Spec: l.s.spec, Classes: l.ds.Classes, Params: params,
		States: states, Optim: st, Epoch: epoch, GlobalStep: step, BestEpoch: l.bestEpoch,
		BestValAcc: l.bestAcc, History: l.res.History, Finished: finished}, nil
}

// finalMetrics evaluates the best checkpoint on validation and test and
// writes results.json.
func (l *loop) finalMetrics() error {
	ck, err := LoadCheckpoint(l.d.path("best.ckpt"))
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if l.res.Val, l.res.Test, err = l.s.measure(ck, l.ds); err != nil {
		return err
	}
	return l.d.writeResult(l.res)
}

// state records the run's state in state.json.
func (l *loop) state(state string, epoch int, msg string) {
	l.d.saveState(runState{State: state, Message: msg, Epoch: epoch, Epochs: l.cfg.Epochs, BestEpoch: l.bestEpoch,
		BestAcc: l.bestAcc, Model: l.s.spec.Kind, Device: l.s.device, Data: l.cfg.Data})
}

// finalState records how the run ended.
func (l *loop) finalState(err error) {
	best := -1.0
	for _, h := range l.res.History {
		if h.Epoch == l.res.BestEpoch {
			best = h.ValAcc
		}
	}
	l.bestEpoch, l.bestAcc = l.res.BestEpoch, best
	switch {
	case err == nil:
		l.state(RunFinished, l.res.Epochs, l.res.Stopped)
	case errors.Is(err, ErrStopped):
		l.state(RunStopped, l.res.Epochs, l.res.Stopped)
	default:
		l.state(stateFailed, l.res.Epochs, err.Error())
	}
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

// proofSampler samples the GPU at most every second while training on it
// and keeps the summary in the result (the proof of GPU use).
type proofSampler struct {
	read    GPUSampler
	ordinal int
	last    time.Time
	latest  *GPUSample
	sumUtil float64
}

func (p *proofSampler) sample(ctx context.Context, res *Result) *GPUSample {
	if p == nil || res == nil || res.GPU == nil {
		return nil
	}
	if time.Since(p.last) < time.Second {
		return p.latest
	}
	p.last = time.Now()
	s, err := p.read(ctx, p.ordinal, os.Getpid())
	if err != nil {
		res.GPU.Error = err.Error()
		return p.latest
	}
	g := res.GPU
	g.Samples++
	p.sumUtil += float64(s.Utilization)
	g.MeanUtil = p.sumUtil / float64(g.Samples)
	g.MaxUtil = max(g.MaxUtil, s.Utilization)
	g.ProcessListed = g.ProcessListed || s.ProcessListed
	g.PeakProcessMiB = max(g.PeakProcessMiB, s.ProcessMiB)
	p.latest = &s
	return p.latest
}
