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

	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
)

var (
	colTrain = color.NRGBA{R: 0x4c, G: 0x9a, B: 0xff, A: 0xff}
	colVal   = color.NRGBA{R: 0xff, G: 0x9f, B: 0x1c, A: 0xff}
	colOther = color.NRGBA{R: 0x76, G: 0xb9, B: 0x00, A: 0xff}
	colGPU   = color.NRGBA{R: 0xb0, G: 0x5c, B: 0xff, A: 0xff}
)

// trainView is the Train step: the run in a goroutine, live charts, the
// device and why, Pause/Resume/Stop, and a log that follows its end unless
// the user scrolled up.
type trainView struct {
	wz       *wizard
	device   *widget.Label
	progress *widget.ProgressBar
	where    *widget.Label
	loss     *LineChart
	acc      *LineChart
	lr       *LineChart
	speed    *LineChart
	gpuUtil  *LineChart
	gpuMem   *LineChart
	gpuTemp  *LineChart
	gpuRow   *fyne.Container
	chartBox *fyne.Container
	// A detector's charts: the losses by part and mAP per epoch. The grid
	// in chartBox's middle is the classifier's (loss, accuracy, lr,
	// speed) or the detector's (loss, parts, mAP, lr, speed).
	parts     *LineChart
	maps      *LineChart
	grid      *fyne.Container
	detecting bool
	log       *widget.Label
	logBox    *container.Scroll
	logLines  []string
	// follow says whether the log keeps its end in view: true until the
	// user scrolls up, true again once they scroll back to the end. It is
	// the user's choice, kept from their scrolling, not worked out again
	// from the geometry at each new line (the box shrinks when a label
	// above it wraps onto a second line, which is not scrolling up).
	follow bool
	start  *widget.Button
	pause  *widget.Button
	stop   *widget.Button

	// UI goroutine only
	last    *trainer.Event // the last step event, for the progress line
	paused  bool
	gpuSeen time.Time // the time of the last GPU sample charted
	epochs  int

	mu      sync.Mutex
	cancel  context.CancelFunc
	ctl     *trainer.Control
	active  bool
	done    chan struct{} // closed when the events are all shown
	ended   chan struct{} // closed when the run has ended and the view knows
	content fyne.CanvasObject
}

// maxLogLines is how much of the log the window keeps.
const maxLogLines = 400

func newTrainView(wz *wizard) *trainView {
	v := &trainView{wz: wz}
	v.device = widget.NewLabelWithStyle("Device: chosen when training starts", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.device.Wrapping = fyne.TextWrapWord
	v.progress = widget.NewProgressBar()
	v.progress.TextFormatter = v.progressText
	v.where = widget.NewLabel("")
	v.where.Wrapping = fyne.TextWrapWord
	v.loss = NewLineChart("Loss", &Series{Name: "train (smoothed)", Color: colTrain}, &Series{Name: "validation", Color: colVal, Points: true})
	v.acc = NewLineChart("Accuracy %", &Series{Name: "train (smoothed)", Color: colTrain}, &Series{Name: "validation", Color: colVal, Points: true})
	v.acc.YMin, v.acc.YMax = 0, 100
	v.lr = NewLineChart("Learning rate", &Series{Name: "lr", Color: colOther})
	v.speed = NewLineChart("Images / s", &Series{Name: "img/s", Color: colOther})
	v.gpuUtil = NewLineChart("GPU busy %", &Series{Name: "utilisation", Color: colGPU})
	v.gpuUtil.YMin, v.gpuUtil.YMax = 0, 100
	v.gpuMem = NewLineChart("GPU memory MiB", &Series{Name: "this run", Color: colGPU}, &Series{Name: "device", Color: colOther})
	v.gpuTemp = NewLineChart("GPU °C", &Series{Name: "temperature", Color: colVal})
	v.log = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.log.Wrapping = fyne.TextWrapWord
	v.log.Selectable = true
	v.logBox = container.NewVScroll(v.log)
	v.logBox.SetMinSize(fyne.NewSize(100, 60))
	v.follow = true
	v.logBox.OnScrolled = func(fyne.Position) { v.follow = v.atEnd() }
	v.start = widget.NewButtonWithIcon("Start training", theme.MediaPlayIcon(), v.begin)
	v.start.Importance = widget.HighImportance
	v.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), v.togglePause)
	v.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.halt)
	v.pause.Disable()
	v.stop.Disable()
	top := container.NewVBox(v.device, container.NewBorder(nil, nil, nil, container.NewHBox(v.start, v.pause, v.stop), v.progress), v.where)
	v.parts = NewLineChart("Loss by part (train)", &Series{Name: "box", Color: colTrain, Points: true}, &Series{Name: "class", Color: colVal, Points: true}, &Series{Name: "objectness", Color: colOther, Points: true})
	v.maps = NewLineChart("mAP (validation)", &Series{Name: "mAP50", Color: colVal, Points: true}, &Series{Name: "mAP50-95", Color: colTrain, Points: true})
	v.maps.YMin, v.maps.YMax = 0, 1
	v.gpuRow = container.NewGridWithColumns(3, v.gpuUtil, v.gpuMem, v.gpuTemp)
	v.gpuRow.Hide()
	v.grid = container.NewStack()
	v.setDetecting(false)
	v.chartBox = container.NewBorder(nil, v.gpuRow, nil, nil, v.grid)
	charts := v.chartBox
	split := container.NewVSplit(charts, v.logBox)
	split.Offset = 0.8
	v.content = container.NewBorder(top, nil, nil, nil, split)
	return v
}

// setDetecting lays the charts out for a detector's run (on) or a
// classifier's.
func (v *trainView) setDetecting(on bool) {
	if on == v.detecting && len(v.grid.Objects) > 0 {
		return
	}
	v.detecting = on
	g := container.NewGridWithColumns(2, v.loss, v.acc, v.lr, v.speed)
	v.acc.Show()
	if on {
		g = container.NewGridWithColumns(3, v.loss, v.parts, v.maps, v.lr, v.speed)
		v.acc.Hide()
	}
	v.grid.Objects = []fyne.CanvasObject{g}
	v.grid.Refresh()
}

// isDetectionEpoch says whether an epoch event is a detection run's: it
// carries the parts of the loss, or mAP.
func isDetectionEpoch(ev trainer.Event) bool {
	return ev.BoxLoss != 0 || ev.ClsLoss != 0 || ev.ObjLoss != 0 || ev.MAP50 != 0 || ev.MAP5095 != 0
}

// progressText is the progress bar's text: the share done, and "paused"
// while paused.
func (v *trainView) progressText() string {
	pct := fmt.Sprintf("%.0f%%", 100*v.progress.Value)
	if v.paused {
		return "Paused · " + pct
	}
	return pct
}

func (v *trainView) running() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.active
}

func (v *trainView) enter() {
	v.wz.refreshNav()
	if !v.running() && v.wz.result == nil {
		v.showReady()
	}
}

// showReady says what the next run will do and where.
func (v *trainView) showReady() {
	v.where.SetText("Ready: " + describe(v.wz.cfg))
	dev := "Automatic (the GPU when it can be used, else the CPU, with the reason)"
	switch d := v.wz.cfg.Device; {
	case d == "cpu":
		dev = "CPU (chosen in Settings)"
	case strings.HasPrefix(d, "cuda"):
		dev = strings.ToUpper(d) + " (chosen in Settings)"
	}
	v.device.SetText("Device: " + dev)
}

// reset clears what the previous run left on the step (its last line,
// charts, device, progress and log), ready for a run with the current
// settings. Nothing happens while a run trains.
func (v *trainView) reset() {
	if v.running() {
		return
	}
	v.clear()
	v.showReady()
}

// clear empties the charts (their x axes to the planned epochs), the
// progress and the log, and lays the charts out for the chosen dataset's
// task.
func (v *trainView) clear() {
	v.setDetecting(v.wz.isDetection())
	v.resetCharts(v.wz.cfg.Epochs)
	v.showGPU(false)
	v.last, v.gpuSeen = nil, time.Time{}
	v.setPaused(false)
	v.progress.SetValue(0)
	v.clearLog()
}

// clearLog empties the log and makes it follow its end again.
func (v *trainView) clearLog() {
	v.logLines = v.logLines[:0]
	v.log.SetText("")
	v.log.Resize(fyne.NewSize(v.logBox.Size().Width, v.log.MinSize().Height))
	v.logBox.ScrollToTop()
	v.follow = true
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

// logf adds a line to the log. The log follows its end unless the user
// has scrolled up to read.
func (v *trainView) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	v.logLines = append(v.logLines, strings.Split(line, "\n")...)
	if n := len(v.logLines); n > maxLogLines {
		v.logLines = append(v.logLines[:0], v.logLines[n-maxLogLines:]...)
	}
	v.log.SetText(strings.Join(v.logLines, "\n"))
	// Size the text now (the layout would only next frame), so that the
	// scroll knows how far its end is.
	w := v.logBox.Size().Width
	v.log.Resize(fyne.NewSize(w, v.log.MinSize().Height))
	if v.follow {
		v.logBox.ScrollToBottom()
	}
}

// atEnd says whether the log shows its last line (or has nothing to
// scroll).
func (v *trainView) atEnd() bool {
	view := v.logBox.Size().Height
	content := v.log.Size().Height
	return content <= view || v.logBox.Offset.Y >= content-view-8
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
	opts.RunIndex = wz.deps.RunIndex
	if opts.Resume == "" {
		opts.Dataset = wz.dataset // used when the settings still match how it was loaded: no second copy
	}
	wz.resume = trainer.Options{}
	v.mu.Lock()
	v.active, v.cancel, v.ctl, v.done, v.ended = true, cancel, ctl, make(chan struct{}), make(chan struct{})
	done, ended := v.done, v.ended
	v.mu.Unlock()
	wz.result = nil
	v.showStart(opts)
	wz.refreshNav()
	events := make(chan trainer.Event, 256)
	cfg := wz.cfg
	// The run and the consumer of its events are off the UI goroutine; the
	// consumer batches what arrives and applies it at most 10 times a second.
	wz.background(func() {
		wz.settings.estRun.Wait() // a time estimate being stopped frees its memory first
		res, err := wz.deps.Train(ctx, cfg, events, opts)
		close(events)
		<-done
		wz.ui(func() { v.finished(res, err) })
		close(ended)
	})
	wz.background(func() {
		defer close(done)
		var limit heapLimit
		defer limit.release()
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
				if ev.Kind == trainer.EventStart {
					limit.hold() // the network is built: keep the heap near it
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

// showStart shows a run starting: the charts and the log empty (a resumed
// or extended run's EventStart brings the curves that came before), Pause
// and Stop, and what starts.
func (v *trainView) showStart(opts trainer.Options) {
	v.clear()
	v.start.Disable()
	v.pause.Enable()
	v.stop.Enable()
	v.where.SetText("Starting: reading the dataset and building the model…")
	v.device.SetText("Device: chosen as the run starts…")
	switch {
	case opts.Resume != "" && opts.Extend > 0:
		v.logf("Training %s for %d more epoch(s)", opts.Resume, opts.Extend)
	case opts.Resume != "":
		v.logf("Resuming %s", opts.Resume)
	default:
		v.logf("Starting: %s", describe(v.wz.cfg))
	}
}

// deviceMiB is the memory of CUDA device dev ("cuda:1") as the check saw
// it; 0 when unknown.
func (v *trainView) deviceMiB(dev string) int {
	r := v.wz.report
	n, err := trainer.CUDAOrdinal(dev)
	if r == nil || r.Facts == nil || err != nil || !strings.HasPrefix(dev, "cuda") {
		return 0
	}
	for _, g := range r.Facts.NVML.GPUs {
		if g.Index == n {
			return int(g.MemoryTotalMiB)
		}
	}
	return 0
}

// showGPU shows or hides the NVML charts.
func (v *trainView) showGPU(on bool) {
	if on == v.gpuRow.Visible() {
		return
	}
	if on {
		v.gpuRow.Show()
	} else {
		v.gpuRow.Hide()
	}
	v.chartBox.Refresh()
}

func (v *trainView) charts() []*LineChart {
	return []*LineChart{v.loss, v.acc, v.lr, v.speed, v.gpuUtil, v.gpuMem, v.gpuTemp, v.parts, v.maps}
}

// resetCharts empties the charts and sets their x axes to epochs.
func (v *trainView) resetCharts(epochs int) {
	v.epochs = epochs
	for _, c := range v.charts() {
		c.XMax = float64(max(epochs, 1))
		c.Reset()
	}
}

// history charts what a resumed or extended run did before.
func (v *trainView) history(steps []trainer.StepPoint, epochs []trainer.EpochResult) {
	for _, p := range steps {
		v.loss.Append(0, p.X, p.Loss)
		v.acc.Append(0, p.X, 100*p.Accuracy)
		if p.LR > 0 {
			v.lr.Append(0, p.X, p.LR)
		}
	}
	for _, e := range epochs {
		x := float64(e.Epoch)
		if len(steps) == 0 { // no step history: the epoch means stand in
			v.loss.Append(0, x, e.TrainLoss)
			v.acc.Append(0, x, 100*e.TrainAcc)
			v.lr.Append(0, x, e.LR)
		}
		v.loss.Append(1, x, e.ValLoss)
		v.acc.Append(1, x, 100*e.ValAcc)
		if e.ImagesPerSec > 0 {
			v.speed.Append(0, x, e.ImagesPerSec)
		}
		if e.BoxLoss != 0 || e.ClsLoss != 0 || e.ObjLoss != 0 || e.MAP50 != 0 || e.MAP5095 != 0 {
			v.setDetecting(true)
			v.detectionEpoch(x, e.BoxLoss, e.ClsLoss, e.ObjLoss, e.MAP50, e.MAP5095)
		}
	}
}

// detectionEpoch charts a detector's epoch: its losses by part and mAP.
func (v *trainView) detectionEpoch(x, box, cls, obj, map50, map5095 float64) {
	v.parts.Append(0, x, box)
	v.parts.Append(1, x, cls)
	v.parts.Append(2, x, obj)
	v.maps.Append(0, x, map50)
	v.maps.Append(1, x, map5095)
}

// apply shows a batch of events: one refresh per chart per batch.
func (v *trainView) apply(evs []trainer.Event) {
	progress := -1.0
	stepped := false
	for _, ev := range evs {
		switch ev.Kind {
		case trainer.EventStart:
			v.device.SetText(fmt.Sprintf("Device: %s · %s", strings.ToUpper(ev.Device), ev.DeviceReason))
			v.logf("%s\nRun folder: %s", ev.Message, ev.RunDir)
			if ev.Epochs > 0 {
				v.resetCharts(ev.Epochs)
			}
			v.history(ev.StepHistory, ev.History)
			if len(ev.History) > 0 {
				v.logf("The charts continue from the %d epoch(s) trained before.", len(ev.History))
			}
			// NVML's charts only mean something on a GPU.
			v.showGPU(ev.Device != "" && ev.Device != "cpu")
			v.gpuMem.Title = "GPU memory MiB"
			if total := v.deviceMiB(ev.Device); total > 0 { // the device's total, in the title
				v.gpuMem.Title = fmt.Sprintf("GPU memory MiB (of %d)", total)
			}
		case trainer.EventLog:
			v.logf("%s", strings.TrimRight(ev.Message, "\n"))
		case trainer.EventStep:
			if ev.Epochs > 0 && ev.Epochs != v.epochs {
				v.epochs = ev.Epochs
				for _, c := range v.charts() {
					c.XMax = float64(ev.Epochs)
				}
			}
			x := ev.X
			if x == 0 {
				x = float64(ev.Epoch-1) + float64(ev.Step)/float64(max(ev.Steps, 1))
			}
			loss, acc := smoothed(&ev)
			v.loss.Append(0, x, loss)
			v.acc.Append(0, x, 100*acc)
			v.lr.Append(0, x, ev.LR)
			v.speed.Append(0, x, ev.ImagesPerSec)
			if g := ev.GPU; g != nil && g.Time != v.gpuSeen {
				v.gpuSeen = g.Time
				v.gpuUtil.Append(0, x, float64(g.Utilization))
				if g.ProcessListed {
					v.gpuMem.Append(0, x, float64(g.ProcessMiB))
				}
				v.gpuMem.Append(1, x, float64(g.MemoryUsedMiB))
				if g.TemperatureC > 0 {
					v.gpuTemp.Append(0, x, float64(g.TemperatureC))
				}
				if v.gpuRow.Hidden {
					v.showGPU(true)
				}
			}
			progress = x / float64(max(ev.Epochs, 1))
			e := ev
			v.last, stepped = &e, true
		case trainer.EventEpoch:
			v.epoch(ev)
			progress = float64(ev.Epoch) / float64(max(ev.Epochs, 1))
		case trainer.EventDone:
			v.logf("%s", ev.Message)
		}
	}
	if progress >= 0 {
		v.progress.SetValue(progress)
	}
	if stepped {
		v.showWhere()
	}
	for _, c := range v.charts() {
		c.Refresh()
	}
}

// epoch charts and logs an epoch's results.
func (v *trainView) epoch(ev trainer.Event) {
	x := float64(ev.Epoch)
	v.loss.Append(1, x, ev.ValLoss)
	best := ""
	if ev.Best {
		best = " (best so far)"
	}
	if isDetectionEpoch(ev) {
		v.setDetecting(true)
		v.detectionEpoch(x, ev.BoxLoss, ev.ClsLoss, ev.ObjLoss, ev.MAP50, ev.MAP5095)
		v.logf("epoch %d/%d: train loss %.4f (box %.4f, class %.4f, objectness %.4f) · val loss %.4f · mAP50 %.3f, mAP50-95 %.3f%s",
			ev.Epoch, ev.Epochs, ev.Loss, ev.BoxLoss, ev.ClsLoss, ev.ObjLoss, ev.ValLoss, ev.MAP50, ev.MAP5095, best)
		return
	}
	v.acc.Append(1, x, 100*ev.ValAccuracy)
	v.logf("epoch %d/%d: train loss %.4f acc %.2f%% · val loss %.4f acc %.2f%%%s", ev.Epoch, ev.Epochs, ev.Loss, 100*ev.Accuracy, ev.ValLoss, 100*ev.ValAccuracy, best)
}

// smoothed is a step's smoothed training loss and accuracy, or its
// running means when the event has none (a trainer that does not smooth).
func smoothed(ev *trainer.Event) (loss, acc float64) {
	if ev.SmoothLoss == 0 && ev.SmoothAccuracy == 0 {
		return ev.Loss, ev.Accuracy
	}
	return ev.SmoothLoss, ev.SmoothAccuracy
}

// showWhere writes the progress line from the last step: no speed and no
// time left while paused.
func (v *trainView) showWhere() {
	ev := v.last
	if ev == nil {
		return
	}
	loss, acc := smoothed(ev)
	pos := fmt.Sprintf("Epoch %d of %d · step %d of %d · loss %.4f · accuracy %.1f%%", ev.Epoch, ev.Epochs, ev.Step, ev.Steps, loss, 100*acc)
	if v.detecting {
		pos = fmt.Sprintf("Epoch %d of %d · step %d of %d · loss %.4f", ev.Epoch, ev.Epochs, ev.Step, ev.Steps, loss)
	}
	if v.paused {
		v.where.SetText("Paused at " + strings.ToLower(pos[:1]) + pos[1:] + ". Resume to go on; Stop keeps a resumable checkpoint.")
		return
	}
	gpuUse := ""
	if g := ev.GPU; g != nil {
		gpuUse = fmt.Sprintf(" · GPU %d%% busy, this run %d MiB", g.Utilization, g.ProcessMiB)
		if !g.ProcessListed {
			gpuUse = fmt.Sprintf(" · GPU %d%% busy (NVML does not list this process)", g.Utilization)
		}
	}
	v.where.SetText(fmt.Sprintf("%s · %.0f images/s · about %s left%s", pos, ev.ImagesPerSec, ev.ETA.Round(time.Second), gpuUse))
}

func (v *trainView) finished(res *trainer.Result, err error) {
	v.mu.Lock()
	v.active, v.cancel = false, nil
	v.mu.Unlock()
	v.setPaused(false)
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
		v.where.SetText(finishedText(res))
		v.wz.result = res
	}
	v.wz.refreshNav()
}

// finishedText says how a finished run did: its best validation
// accuracy, or a detector's best mAP.
func finishedText(res *trainer.Result) string {
	switch {
	case res.Detect != nil:
		return fmt.Sprintf("Finished: best mAP50-95 %.3f (mAP50 %.3f) on the validation images at epoch %d. Next shows the results.", res.Detect.MAP5095, res.Detect.MAP50, res.BestEpoch)
	case res.Val != nil:
		return fmt.Sprintf("Finished: best validation accuracy %.2f%% at epoch %d. Next shows the results.", 100*res.Val.Accuracy, res.BestEpoch)
	}
	return fmt.Sprintf("Finished after %s. Next shows the results.", plural.Count(res.Epochs, "epoch"))
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
		v.setPaused(false)
		v.logf("resumed")
	} else {
		ctl.Pause()
		v.setPaused(true)
		v.logf("paused after the current step")
	}
	if v.last != nil {
		v.showWhere()
	} else if v.paused {
		v.where.SetText("Paused.")
	}
}

// setPaused shows the run as paused or not: the Pause button (Resume
// while paused) and the progress bar's text.
func (v *trainView) setPaused(p bool) {
	v.paused = p
	if p {
		v.pause.SetText("Resume")
		v.pause.SetIcon(theme.MediaPlayIcon())
	} else {
		v.pause.SetText("Pause")
		v.pause.SetIcon(theme.MediaPauseIcon())
	}
	v.progress.Refresh()
}

// halt stops the run; the trainer saves a resumable checkpoint.
func (v *trainView) halt() {
	v.mu.Lock()
	cancel, ctl := v.cancel, v.ctl
	v.mu.Unlock()
	if cancel != nil {
		cancel()
		ctl.Resume() // a paused run must wake up to stop
		v.paused = false
		v.progress.Refresh()
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
