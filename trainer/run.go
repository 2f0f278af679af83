package trainer

import (
	"context"
	"errors"
	"runtime"
)

// Run trains in the caller's goroutine and reports on events (which the
// caller owns and drains; Run never closes it): a run folder (new, or
// opts.Resume), a session on the chosen device, and the epoch loop.
// Cancelling ctx stops after the current step and leaves a resumable
// last.ckpt.
func Run(ctx context.Context, cfg Config, events chan<- Event, opts Options) (*Result, error) {
	em := &emitter{ch: events}
	res, err := train(ctx, cfg, em, opts)
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

// train is Run without the done event: it resumes or creates the run
// folder (once the model is planned: a device or dataset that fails leaves
// no empty folder), then runs the loop and records how it ended.
func train(ctx context.Context, cfg Config, em *emitter, opts Options) (*Result, error) {
	say := func(m string) { em.send(ctx, Event{Kind: EventLog, Message: m}) }
	rs := &resumed{}
	if opts.Resume != "" {
		var err error
		if rs, err = resumeRun(opts); err != nil {
			return nil, err
		}
		defer rs.d.release()
		cfg = rs.cfg
		if rs.note != "" {
			say(rs.note)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Threads))
	}
	if cfg.IsDetect() {
		return trainDetect(ctx, cfg, em, opts, rs)
	}
	s, ds, err := openRun(ctx, cfg, opts, rs, say)
	if err != nil {
		return nil, err
	}
	defer s.close()
	res := &Result{Device: s.device, DeviceReason: s.reason, Classes: ds.Classes}
	d, release, err := useRunDir(rs, opts, res, say, func() (*rundir, error) { return newRunDir(cfg, opts, s, ds) })
	if err != nil {
		return nil, err
	}
	defer release()
	return res, drive(ctx, newLoop(cfg, ds, s, d, em, opts, res), rs)
}

// trainLoop is a run's training loop: the classifier's or the detector's.
type trainLoop interface {
	restore(ck *Checkpoint) error
	note(m string) // said before the start event
	run(ctx context.Context) error
	finalState(err error)
}

// useRunDir gives a run its folder, the resumed one or a new one that mk
// makes (release it when the run ends), and lists it in the run index.
func useRunDir(rs *resumed, opts Options, res *Result, say func(string), mk func() (*rundir, error)) (*rundir, func(), error) {
	d, release := rs.d, func() {}
	if d == nil {
		var err error
		if d, err = mk(); err != nil {
			return nil, nil, err
		}
		release = d.release
	}
	res.RunDir = d.dir
	if opts.RunIndex != "" {
		if err := RecordRun(opts.RunIndex, d.dir); err != nil {
			say("note: the window's Runs view will not list this run: " + err.Error())
		}
	}
	return d, release, nil
}

// drive restores a resumed run's checkpoint into l, trains, and records
// how the run ended.
func drive(ctx context.Context, l trainLoop, rs *resumed) error {
	if rs.ck != nil {
		if err := l.restore(rs.ck); err != nil {
			return err
		}
	}
	if rs.extend != "" {
		l.note(rs.extend)
	}
	err := l.run(ctx)
	l.finalState(err)
	return err
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
