package app

import (
	"context"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// fakeTrain emits a short run's events; it honours pause and stop.
func fakeTrain(t *testing.T, steps int) func(context.Context, trainer.Config, chan<- trainer.Event, trainer.Options) (*trainer.Result, error) {
	return func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
		res := &trainer.Result{RunDir: t.TempDir(), Device: "cpu", Classes: []string{"a", "b"}}
		ev <- trainer.Event{Kind: trainer.EventStart, Device: "cpu", DeviceReason: "fake: no GPU here", Epochs: 2, Steps: steps}
		for e := 1; e <= 2; e++ {
			for s := 1; s <= steps; s++ {
				for opts.Control != nil && opts.Control.Paused() && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				if ctx.Err() != nil {
					res.Stopped, res.Epochs = "stopped by the user", e-1
					ev <- trainer.Event{Kind: trainer.EventDone, Message: "stopped"}
					return res, trainer.ErrStopped
				}
				ev <- trainer.Event{Kind: trainer.EventStep, Epoch: e, Epochs: 2, Step: s, Steps: steps, Loss: 1 / float64(s+e), Accuracy: 0.5, LR: 0.001, ImagesPerSec: 100}
			}
			ev <- trainer.Event{Kind: trainer.EventEpoch, Epoch: e, Epochs: 2, ValLoss: 0.5, ValAccuracy: 0.8, Best: true}
		}
		res.Epochs, res.BestEpoch = 2, 2
		res.Val = &trainer.Metrics{Split: "val", Images: 10, Accuracy: 0.9, PerClass: []trainer.ClassMetrics{{Class: "a", Precision: 1, Recall: 0.8, F1: 0.89, Support: 5}, {Class: "b", Precision: 0.83, Recall: 1, F1: 0.91, Support: 5}},
			Confusion: [][]int{{4, 1}, {0, 5}}}
		ev <- trainer.Event{Kind: trainer.EventDone, Message: "finished"}
		return res, nil
	}
}

func noGPUReport() gpu.Report {
	return gpu.Report{Verdict: "Not ready: This machine has no NVIDIA GPU.", Facts: &gpu.Facts{},
		Findings: []gpu.Finding{{ID: "no_nvidia_gpu", Cause: gpu.CauseOther, Severity: gpu.SevError, Title: "This machine has no NVIDIA GPU"}}}
}

// uiLoop stands in for Fyne's UI goroutine in tests: one goroutine runs
// every UI function in turn, and the tests act through it too.
type uiLoop struct {
	ch   chan func()
	quit chan struct{}
}

func newUILoop(t *testing.T) *uiLoop {
	l := &uiLoop{ch: make(chan func()), quit: make(chan struct{})}
	go l.serve()
	t.Cleanup(func() { close(l.quit) })
	return l
}

// serve runs the functions sent to the loop. A function that ends its
// goroutine (t.Fatalf inside a ui(...) call) would end the loop with it
// and leave every later call waiting forever: the loop starts again.
func (l *uiLoop) serve() {
	quit := false
	defer func() {
		if !quit {
			go l.serve()
		}
	}()
	for {
		select {
		case f := <-l.ch:
			f()
		case <-l.quit:
			quit = true
			return
		}
	}
}

// do runs f on the loop and waits for it to end, however it ends.
func (l *uiLoop) do(f func()) {
	done := make(chan struct{})
	select {
	case l.ch <- func() { defer close(done); f() }:
		<-done
	case <-l.quit:
	}
}

func (l *uiLoop) async(f func()) { go l.do(f) }

func newTestWizard(t *testing.T, deps Deps) (*wizard, *uiLoop) {
	t.Helper()
	a := test.NewTempApp(t)
	loop := newUILoop(t)
	deps.UI, deps.UIAsync = loop.do, loop.async
	w := test.NewTempWindow(t, widget.NewLabel(""))
	if deps.Check == nil {
		deps.Check = func(context.Context) (gpu.Report, error) { return noGPUReport(), nil }
	}
	if deps.SettingsFile == "" {
		deps.SettingsFile = filepath.Join(t.TempDir(), "settings.yaml")
	}
	if deps.LoadData == nil {
		deps.LoadData = data.Load
	}
	wz := newWizard(context.Background(), a, w, deps)
	// The check starts at once in the background; the test driver runs
	// fyne.Do inline on that goroutine, so wait before touching widgets.
	wz.check.wg.Wait()
	wz.wg.Wait()
	w.SetContent(wz.content)
	w.Resize(fyne.NewSize(1000, 700))
	return wz, loop
}

func TestWizardWalkThrough(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 3)})
	win := wz.win
	ui := loop.do
	if wz.report == nil || !strings.Contains(wz.check.verdict.Text, "no NVIDIA GPU") {
		t.Fatalf("the check runs in the background at start: %q", wz.check.verdict.Text)
	}
	ui(func() { test.Tap(wz.next) })
	wz.wg.Wait()
	if wz.cur != 1 || wz.dataset == nil || wz.dataset.Format != "builtin" || len(wz.dataView.samples.Objects) == 0 {
		t.Fatalf("dataset step: cur %d, dataset %v", wz.cur, wz.dataset)
	}
	ui(func() { test.Tap(wz.next) })
	if wz.cur != 2 {
		t.Fatalf("the built-in dataset must let Next through: %q", wz.status.Text)
	}
	// An invalid field stops the step, with the message naming it.
	ui(func() {
		wz.settings.entries["batch"].SetText("0")
		test.Tap(wz.next)
	})
	if wz.cur != 2 || !strings.Contains(wz.status.Text, "batch size") {
		t.Fatalf("batch 0 accepted: cur %d status %q", wz.cur, wz.status.Text)
	}
	ui(func() {
		wz.settings.entries["batch"].SetText("32")
		wz.settings.preset("quick")
		test.Tap(wz.next)
	})
	if wz.cur != 3 || wz.cfg.Epochs != 2 || wz.cfg.Batch != 64 {
		t.Fatalf("settings: cur %d, %+v", wz.cur, wz.cfg)
	}
	if !wz.next.Disabled() {
		t.Fatal("Next must wait for a trained model")
	}
	ui(func() { test.Tap(wz.train.start) })
	wz.wg.Wait()
	if wz.result == nil || wz.next.Disabled() || !strings.Contains(wz.train.device.Text, "fake: no GPU here") {
		t.Fatalf("after training: result %v, device %q", wz.result, wz.train.device.Text)
	}
	if wz.train.loss.Len(0) == 0 || wz.train.acc.Len(1) != 2 {
		t.Fatalf("charts: %d loss points, %d val accuracy points", wz.train.loss.Len(0), wz.train.acc.Len(1))
	}
	// The Train step after the fake event stream, as a golden image.
	ui(func() {
		wz.train.log.SetText("") // the log holds temporary paths
		assertImage(t, "train-step.png", win.Canvas().Capture())
	})
	ui(func() { test.Tap(wz.next) })
	wz.wg.Wait()
	if wz.cur != 4 || !strings.Contains(wz.results.summary.Text, "90.00%") || !wz.results.resumeBtn.Disabled() {
		t.Fatalf("results: %q", wz.results.summary.Text)
	}
	if b, err := os.ReadFile(wz.deps.SettingsFile); err != nil || !strings.Contains(string(b), "epochs: 2") {
		t.Fatalf("the settings must be remembered: %q %v", b, err)
	}
}

// TestWizardRejectsCOCO: a COCO file is linted, not trained on; Next
// says to export it as YOLO.
func TestWizardRejectsCOCO(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{})
	ui := loop.do
	ui(func() { wz.show(1) })
	wz.wg.Wait()
	ui(func() {
		wz.dataView.loaded("/x/instances.json", datasetLoad{format: "coco"})
		test.Tap(wz.next)
	})
	if wz.cur != 1 || !strings.Contains(wz.status.Text, "export it as YOLO") {
		t.Fatalf("a COCO file went through: %q", wz.status.Text)
	}
}

func TestDeviceSelectorShowsRejectedGPUs(t *testing.T) {
	rep := gpu.Report{Verdict: "Not ready", Facts: &gpu.Facts{NVML: gpu.NVMLFacts{Status: gpu.NVMLOK, GPUs: []gpu.GPU{{Index: 0, Name: "NVIDIA GeForce GTX 1080"}}}},
		Findings: []gpu.Finding{{ID: "reboot_needed", Cause: gpu.CauseDriverMissing, Severity: gpu.SevError, Title: "The driver was upgraded (reboot needed)"}}}
	wz, loop := newTestWizard(t, Deps{Check: func(context.Context) (gpu.Report, error) { return rep, nil }})
	loop.do(func() { wz.show(2) })
	if len(wz.settings.rejected.Objects) != 1 {
		t.Fatalf("%d rejected devices shown", len(wz.settings.rejected.Objects))
	}
	box := wz.settings.rejected.Objects[0].(*fyne.Container)
	radio := box.Objects[0].(*widget.RadioGroup)
	note := box.Objects[1].(*widget.Label)
	if !radio.Disabled() || radio.Options[0] != "GPU 0: NVIDIA GeForce GTX 1080" || !strings.Contains(note.Text, "reboot needed") {
		t.Fatalf("GPU option %v disabled=%v note %q", radio.Options, radio.Disabled(), note.Text)
	}
}

func TestPauseAndStop(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 1_000_000)})
	ui := loop.do
	ui(func() {
		wz.show(3)
		test.Tap(wz.train.start)
		test.Tap(wz.train.pause)
	})
	var paused, backOff bool
	var text string
	ui(func() { paused, text, backOff = wz.train.ctl.Paused(), wz.train.pause.Text, wz.back.Disabled() })
	if !paused || text != "Resume" || !backOff {
		t.Fatalf("pause: paused %v button %q back disabled %v", paused, text, backOff)
	}
	ui(func() { test.Tap(wz.train.pause) })
	if wz.train.ctl.Paused() {
		t.Fatal("resume did not resume")
	}
	closed := make(chan struct{})
	ui(func() { wz.train.stopThen(func() { close(closed) }) })
	<-closed
	wz.wg.Wait()
	ui(func() {
		if wz.train.running() || wz.result == nil || wz.result.Stopped == "" || !strings.Contains(wz.train.where.Text, "Stopped") {
			t.Errorf("stop: running %v result %+v where %q", wz.train.running(), wz.result, wz.train.where.Text)
		}
	})
}

func TestLineChartRendering(t *testing.T) {
	test.NewTempApp(t)
	c := NewLineChart("Loss", &Series{Name: "train", Color: color.NRGBA{R: 0x4c, G: 0x9a, B: 0xff, A: 0xff}}, &Series{Name: "val", Color: color.NRGBA{R: 0xff, G: 0x9f, B: 0x1c, A: 0xff}})
	for i := 0; i < 500; i++ {
		x := float64(i) / 100
		c.Append(0, x, 2/(1+x))
		if i%100 == 99 {
			c.Append(1, x, 2.2/(1+x))
		}
	}
	w := test.NewTempWindow(t, c)
	w.Resize(fyne.NewSize(400, 200))
	c.Refresh()
	assertImage(t, "linechart.png", w.Canvas().Capture())
	// 500 points in ~340 px are decimated to about one segment per 2 px.
	r := test.WidgetRenderer(c).(*chartRenderer)
	shown := 0
	for _, l := range r.lines[0] {
		if !l.Hidden {
			shown++
		}
	}
	if shown == 0 || shown > 200 {
		t.Fatalf("%d segments drawn for 500 points", shown)
	}
}

// BenchmarkChartsFrame is one refresh of the Train step's four charts
// (two series of 2,000 points each): its CPU cost ×10 per second must stay
// well under a quarter of a core (the GL painting comes on top).
func BenchmarkChartsFrame(b *testing.B) {
	test.NewTempApp(b)
	var charts []*LineChart
	for i := 0; i < 4; i++ {
		c := NewLineChart("c", &Series{Name: "a", Color: colTrain}, &Series{Name: "b", Color: colVal})
		for k := 0; k < 2000; k++ {
			c.Append(0, float64(k), float64(k%97))
			c.Append(1, float64(k), float64(k%89))
		}
		charts = append(charts, c)
	}
	w := test.NewTempWindow(b, container.NewGridWithColumns(2, charts[0], charts[1], charts[2], charts[3]))
	w.Resize(fyne.NewSize(1100, 500))
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range charts {
			c.Append(0, 2001, 1)
			test.WidgetRenderer(c).Layout(c.Size())
		}
	}
	perFrame := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perFrame*10*100, "%core@10Hz")
}

func TestDeviceSelectorOffersReadyGPUs(t *testing.T) {
	rep := gpu.Report{Verdict: "Ready", Facts: &gpu.Facts{NVML: gpu.NVMLFacts{Status: gpu.NVMLOK, GPUs: []gpu.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3"}}}}}
	if ok, _, why := rep.DriverReady(); !ok {
		t.Fatalf("fixture not ready: %s", why)
	}
	wz, loop := newTestWizard(t, Deps{Check: func(context.Context) (gpu.Report, error) { return rep, nil }})
	loop.do(func() { wz.show(2) })
	var cfg trainer.Config
	var err error
	loop.do(func() {
		if len(wz.settings.rejected.Objects) != 0 {
			t.Errorf("a ready GPU is shown as rejected")
		}
		wz.settings.device.SetSelected("GPU 0: NVIDIA H100 80GB HBM3")
		cfg, err = wz.settings.read()
	})
	if err != nil || cfg.Device != "cuda:0" {
		t.Fatalf("choosing the GPU gives device %q (%v); options %v", cfg.Device, err, wz.settings.device.Options)
	}
	loop.do(func() { wz.settings.set(cfg) })
	if wz.settings.device.Selected != "GPU 0: NVIDIA H100 80GB HBM3" {
		t.Fatalf("cuda:0 shows as %q", wz.settings.device.Selected)
	}
}

// TestGPUUseIsShown: training on CUDA, the progress line says how busy NVML
// sees the GPU and this run's memory, and the results say what NVML saw.
func TestGPUUseIsShown(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{})
	loop.do(func() {
		wz.train.apply([]trainer.Event{
			{Kind: trainer.EventStart, Device: "cuda:0", DeviceReason: "requested with device=cuda: NVIDIA H100"},
			{Kind: trainer.EventStep, Epoch: 1, Epochs: 1, Step: 1, Steps: 10, Device: "cuda:0",
				GPU: &trainer.GPUSample{Utilization: 87, ProcessListed: true, ProcessMiB: 321}},
		})
	})
	if !strings.Contains(wz.train.where.Text, "GPU 87% busy, this run 321 MiB") || !strings.Contains(wz.train.device.Text, "CUDA:0") {
		t.Fatalf("progress %q, device %q", wz.train.where.Text, wz.train.device.Text)
	}
	res := &trainer.Result{Device: "cuda:0", RunDir: t.TempDir(), Epochs: 1, BestEpoch: 1,
		Val: &trainer.Metrics{Accuracy: 0.9},
		GPU: &trainer.GPUProof{Device: "cuda:0", Samples: 12, MeanUtil: 81.5, MaxUtil: 93, ProcessListed: true, PeakProcessMiB: 330}}
	loop.do(func() {
		wz.result = res
		wz.results.enter()
	})
	if !strings.Contains(wz.results.folder.Text, "GPU use on cuda:0: 12 samples, 82% busy on average (peak 93%), up to 330 MiB; NVML listed this run") {
		t.Fatalf("results: %q", wz.results.folder.Text)
	}
}
