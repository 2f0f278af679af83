package app

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/trainer"
)

var (
	colTrain = color.NRGBA{R: 0x4c, G: 0x9a, B: 0xff, A: 0xff}
	colVal   = color.NRGBA{R: 0xff, G: 0x9f, B: 0x1c, A: 0xff}
	colOther = color.NRGBA{R: 0x76, G: 0xb9, B: 0x00, A: 0xff}
)

// trainView is the Train step: the run in a goroutine, live charts, the
// device and why, Pause/Resume/Stop, and a log.
type trainView struct {
	wz       *wizard
	device   *widget.Label
	progress *widget.ProgressBar
	where    *widget.Label
	loss     *LineChart
	acc      *LineChart
	lr       *LineChart
	speed    *LineChart
	log      *widget.Entry
	start    *widget.Button
	pause    *widget.Button
	stop     *widget.Button

	mu      sync.Mutex
	cancel  context.CancelFunc
	ctl     *trainer.Control
	active  bool
	done    chan struct{} // closed when the events are all shown
	ended   chan struct{} // closed when the run has ended and the view knows
	content fyne.CanvasObject
}

func newTrainView(wz *wizard) *trainView {
	v := &trainView{wz: wz}
	v.device = widget.NewLabelWithStyle("Device: chosen when training starts", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.device.Wrapping = fyne.TextWrapWord
	v.progress = widget.NewProgressBar()
	v.where = widget.NewLabel("")
	v.loss = NewLineChart("Loss", &Series{Name: "train", Color: colTrain}, &Series{Name: "val", Color: colVal})
	v.acc = NewLineChart("Accuracy %", &Series{Name: "train", Color: colTrain}, &Series{Name: "val", Color: colVal})
	v.acc.YMin, v.acc.YMax, v.acc.Format = 0, 100, "%.0f"
	v.lr = NewLineChart("Learning rate", &Series{Name: "lr", Color: colOther})
	v.lr.Format = "%.1e"
	v.speed = NewLineChart("Images / s", &Series{Name: "img/s", Color: colOther})
	v.speed.Format = "%.0f"
	v.log = widget.NewMultiLineEntry()
	v.log.Wrapping = fyne.TextWrapBreak
	v.log.SetMinRowsVisible(5)
	v.log.TextStyle = fyne.TextStyle{Monospace: true}
	v.start = widget.NewButtonWithIcon("Start training", theme.MediaPlayIcon(), v.begin)
	v.start.Importance = widget.HighImportance
	v.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), v.togglePause)
	v.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.halt)
	v.pause.Disable()
	v.stop.Disable()
	top := container.NewVBox(v.device, container.NewBorder(nil, nil, nil, container.NewHBox(v.start, v.pause, v.stop), v.progress), v.where)
	charts := container.NewGridWithColumns(2, v.loss, v.acc, v.lr, v.speed)
	split := container.NewVSplit(charts, v.log)
	split.Offset = 0.72
	v.content = container.NewBorder(top, nil, nil, nil, split)
	return v
}

func (v *trainView) running() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.active
}

func (v *trainView) enter() {
	v.wz.refreshNav()
	if !v.running() && v.wz.result == nil {
		v.where.SetText("Ready: " + describe(v.wz.cfg))
		dev := "Automatic (the GPU when it can be used, else the CPU, with the reason)"
		if v.wz.cfg.Device == "cpu" {
			dev = "CPU (chosen in Settings)"
		}
		v.device.SetText("Device: " + dev)
	}
}

func (v *trainView) leave() error {
	if v.running() {
		return errors.New("training is running: stop it or wait for it to finish")
	}
	if v.wz.result == nil {
		return errors.New("train the model first (Start training)")
	}
	return nil
}

func describe(c trainer.Config) string {
	return fmt.Sprintf("%s model, %d epochs, batch %d, %s at %g (%s), seed %d", c.Model, c.Epochs, c.Batch, c.Optimizer, c.LR, c.Schedule, c.Seed)
}

func (v *trainView) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	text := v.log.Text + line + "\n"
	if len(text) > 64<<10 {
		text = text[len(text)-48<<10:]
	}
	v.log.SetText(text)
	v.log.CursorRow = strings.Count(text, "\n")
	v.log.Refresh()
}

// begin starts the run with the chosen settings (or the resume/extend the
// Results step asked for).
func (v *trainView) begin() {
	wz := v.wz
	if v.running() || wz.deps.Train == nil {
		return
	}
	ctx, cancel := context.WithCancel(wz.ctx)
	ctl := &trainer.Control{}
	opts := wz.resume
	opts.Control, opts.Probe, opts.Sample = ctl, wz.deps.Probe, wz.deps.Sample
	wz.resume = trainer.Options{}
	v.mu.Lock()
	v.active, v.cancel, v.ctl, v.done, v.ended = true, cancel, ctl, make(chan struct{}), make(chan struct{})
	done, ended := v.done, v.ended
	v.mu.Unlock()
	wz.result = nil
	for _, c := range []*LineChart{v.loss, v.acc, v.lr, v.speed} {
		c.Reset()
	}
	v.start.Disable()
	v.pause.Enable()
	v.pause.SetText("Pause")
	v.stop.Enable()
	v.progress.SetValue(0)
	if opts.Resume != "" {
		v.logf("Resuming %s (%d more epochs)", opts.Resume, opts.Extend)
	} else {
		v.logf("Starting: %s", describe(wz.cfg))
	}
	wz.refreshNav()
	events := make(chan trainer.Event, 256)
	cfg := wz.cfg
	// The run and the consumer of its events are off the UI goroutine; the
	// consumer batches what arrives and applies it at most 10 times a second.
	wz.background(func() {
		res, err := wz.deps.Train(ctx, cfg, events, opts)
		close(events)
		<-done
		wz.ui(func() { v.finished(res, err) })
		close(ended)
	})
	wz.background(func() {
		defer close(done)
		var batch []trainer.Event
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					if len(batch) > 0 {
						b := batch
						wz.ui(func() { v.apply(b) })
					}
					return
				}
				batch = append(batch, ev)
			case <-tick.C:
				if len(batch) > 0 {
					b := batch
					batch = nil
					wz.ui(func() { v.apply(b) })
				}
			}
		}
	})
}

// apply shows a batch of events: one refresh per chart per batch.
func (v *trainView) apply(evs []trainer.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case trainer.EventStart:
			v.device.SetText(fmt.Sprintf("Device: %s · %s", strings.ToUpper(ev.Device), ev.DeviceReason))
			v.logf("%s\nRun folder: %s", ev.Message, ev.RunDir)
		case trainer.EventLog:
			v.logf("%s", strings.TrimRight(ev.Message, "\n"))
		case trainer.EventStep:
			x := float64(ev.Epoch-1) + float64(ev.Step)/float64(max(ev.Steps, 1))
			v.loss.Append(0, x, ev.Loss)
			v.acc.Append(0, x, 100*ev.Accuracy)
			v.lr.Append(0, x, ev.LR)
			v.speed.Append(0, x, ev.ImagesPerSec)
			v.progress.SetValue(x / float64(max(ev.Epochs, 1)))
			gpuUse := ""
			if g := ev.GPU; g != nil {
				gpuUse = fmt.Sprintf(" · GPU %d%% busy, this run %d MiB", g.Utilization, g.ProcessMiB)
				if !g.ProcessListed {
					gpuUse = fmt.Sprintf(" · GPU %d%% busy (NVML does not list this process)", g.Utilization)
				}
			}
			v.where.SetText(fmt.Sprintf("Epoch %d of %d · step %d of %d · loss %.4f · accuracy %.1f%% · %.0f images/s · about %s left%s",
				ev.Epoch, ev.Epochs, ev.Step, ev.Steps, ev.Loss, 100*ev.Accuracy, ev.ImagesPerSec, ev.ETA.Round(time.Second), gpuUse))
		case trainer.EventEpoch:
			x := float64(ev.Epoch)
			v.loss.Append(1, x, ev.ValLoss)
			v.acc.Append(1, x, 100*ev.ValAccuracy)
			v.progress.SetValue(x / float64(max(ev.Epochs, 1)))
			best := ""
			if ev.Best {
				best = " (best so far)"
			}
			v.logf("epoch %d/%d: train loss %.4f acc %.2f%% · val loss %.4f acc %.2f%%%s", ev.Epoch, ev.Epochs, ev.Loss, 100*ev.Accuracy, ev.ValLoss, 100*ev.ValAccuracy, best)
		case trainer.EventDone:
			v.logf("%s", ev.Message)
		}
	}
	for _, c := range []*LineChart{v.loss, v.acc, v.lr, v.speed} {
		c.Refresh()
	}
}

func (v *trainView) finished(res *trainer.Result, err error) {
	v.mu.Lock()
	v.active, v.cancel = false, nil
	v.mu.Unlock()
	v.start.Enable()
	v.pause.Disable()
	v.stop.Disable()
	switch {
	case errors.Is(err, trainer.ErrStopped):
		v.where.SetText("Stopped. A resumable checkpoint is in " + res.RunDir + " (Results → Resume).")
		v.wz.result = res
	case err != nil:
		v.where.SetText("Training failed: " + err.Error())
		v.logf("error: %v", err)
	default:
		v.progress.SetValue(1)
		v.where.SetText(fmt.Sprintf("Finished: best validation accuracy %.2f%% at epoch %d. Next shows the results.", 100*res.Val.Accuracy, res.BestEpoch))
		v.wz.result = res
	}
	v.wz.refreshNav()
}

func (v *trainView) togglePause() {
	v.mu.Lock()
	ctl := v.ctl
	v.mu.Unlock()
	if ctl == nil {
		return
	}
	if ctl.Paused() {
		ctl.Resume()
		v.pause.SetText("Pause")
		v.pause.SetIcon(theme.MediaPauseIcon())
		v.logf("resumed")
	} else {
		ctl.Pause()
		v.pause.SetText("Resume")
		v.pause.SetIcon(theme.MediaPlayIcon())
		v.logf("paused after the current step")
	}
}

// halt stops the run; the trainer saves a resumable checkpoint.
func (v *trainView) halt() {
	v.mu.Lock()
	cancel, ctl := v.cancel, v.ctl
	v.mu.Unlock()
	if cancel != nil {
		cancel()
		ctl.Resume() // a paused run must wake up to stop
		v.stop.Disable()
		v.logf("stopping after the current step…")
	}
}

// stopThen stops a running training (the trainer saves a resumable
// checkpoint) and calls f on the UI goroutine once the run has ended, or
// at once when nothing runs. It never blocks the UI goroutine.
func (v *trainView) stopThen(f func()) {
	v.mu.Lock()
	ended, active := v.ended, v.active
	v.mu.Unlock()
	if !active {
		f()
		return
	}
	v.halt()
	v.wz.background(func() {
		<-ended
		v.wz.uiAsync(f)
	})
}
