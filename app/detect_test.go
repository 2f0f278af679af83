package app

import (
	"context"
	"image"
	"image/color"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/cli"
	"gpuwizard/internal/synth"
	"gpuwizard/trainer"
	"gpuwizard/trainer/detect"
)

// smallBuiltin is the built-in detection set, small: 24 training and 8
// validation canvases at the size asked (0: 128).
func smallBuiltin(path string, size int, seed int64) (*detect.Dataset, error) {
	if size == 0 {
		size = detect.BuiltinSize
	}
	return detect.GenerateBuiltin(context.Background(), size, 24, 8, seed)
}

// fakeDetector "finds" a 3 in the top-left corner of every image, and a
// weak 5 below the threshold the window draws.
type fakeDetector struct{}

func (fakeDetector) Detect(img image.Image) ([]detect.Detection, error) {
	return []detect.Detection{
		{Class: 3, Score: 0.8, Box: detect.Box{X1: 4, Y1: 4, X2: 30, Y2: 40}},
		{Class: 5, Score: 0.1, Box: detect.Box{X1: 50, Y1: 50, X2: 60, Y2: 60}},
	}, nil
}

func (fakeDetector) Classes() []string {
	return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
}

// fakeDetectTrain emits a 2-epoch detection run: steps without accuracy,
// epochs with the losses by part and mAP, and a result with the metrics.
func fakeDetectTrain(t *testing.T) func(context.Context, trainer.Config, chan<- trainer.Event, trainer.Options) (*trainer.Result, error) {
	return func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
		res := &trainer.Result{RunDir: t.TempDir(), Device: "cpu", Classes: fakeDetector{}.Classes()}
		ev <- trainer.Event{Kind: trainer.EventStart, Device: "cpu", DeviceReason: "fake", Epochs: 2, Steps: 3, Message: "Training det-n on builtin-detect"}
		for e := 1; e <= 2; e++ {
			for s := 1; s <= 3; s++ {
				ev <- trainer.Event{Kind: trainer.EventStep, Epoch: e, Epochs: 2, Step: s, Steps: 3, Loss: 3 / float64(s+e), LR: 0.001, ImagesPerSec: 30}
			}
			ev <- trainer.Event{Kind: trainer.EventEpoch, Epoch: e, Epochs: 2, Loss: 2, BoxLoss: 1, ClsLoss: 0.6, ObjLoss: 0.4, ValLoss: 1.8, MAP50: 0.3 * float64(e), MAP5095: 0.15 * float64(e), Best: true}
		}
		gt := [][]detect.Object{{{Class: 3, Box: detect.Box{X2: 10, Y2: 10}}}, {{Class: 7, Box: detect.Box{X2: 10, Y2: 10}}}}
		m := detect.Evaluate([][]detect.Detection{{{Class: 3, Score: 0.9, Box: detect.Box{X2: 10, Y2: 10}}}, nil}, gt, res.Classes)
		m.Split = "val"
		res.Epochs, res.BestEpoch, res.Detect = 2, 2, &m
		ev <- trainer.Event{Kind: trainer.EventDone, Message: "finished"}
		return res, nil
	}
}

func TestDetectionWalkThrough(t *testing.T) {
	tryImg := filepath.Join(t.TempDir(), "street.png")
	if err := synth.WritePNG(tryImg, image.NewGray(image.Rect(0, 0, 100, 80))); err != nil {
		t.Fatal(err)
	}
	wz, loop := newTestWizard(t, Deps{
		Train:        fakeDetectTrain(t),
		LoadDetect:   smallBuiltin,
		LoadDetector: func(string) (cli.Detector, error) { return fakeDetector{}, nil },
		PickFile:     func(_ fyne.Window, done func(string)) { done(tryImg) },
	})
	ui := loop.do
	ui(func() {
		wz.show(1)
		wz.dataView.load(detect.Builtin)
	})
	wz.wg.Wait()
	ui(func() {
		if wz.detSet == nil || wz.dataset != nil || wz.dataArg != detect.Builtin {
			t.Fatalf("the detection set is not the chosen one: %v %v %q", wz.detSet, wz.dataset, wz.dataArg)
		}
		if !strings.Contains(wz.dataView.format.Text, "BUILTIN-DETECT detection · 10 classes · letterboxed to 128×128, grey · 24 training, 8 validation images") {
			t.Errorf("format: %q", wz.dataView.format.Text)
		}
		if n := len(wz.dataView.samples.Objects); n != 12 {
			t.Errorf("%d sample images, want 12 with their boxes", n)
		}
		test.Tap(wz.next)
	})
	if wz.cur != 2 {
		t.Fatalf("Next refused the detection set: %q", wz.status.Text)
	}
	ui(func() {
		s := wz.settings
		if !slices.Equal(s.model.Options, []string{"auto", "det-n", "det-s"}) || !strings.Contains(s.auto.Text, "detector") {
			t.Errorf("models %v, auto %q", s.model.Options, s.auto.Text)
		}
		// The batch still at the classifiers' default follows the task.
		if c, err := s.read(); err != nil || c.Batch != trainer.DefaultDetectBatch {
			t.Errorf("batch on entering a detector's settings: %d (%v), want %d", c.Batch, err, trainer.DefaultDetectBatch)
		}
		for _, bad := range []string{"100", "64", "672"} {
			s.entries["image_size"].SetText(bad)
			if err := s.entries["image_size"].Validate(); err == nil || !strings.Contains(err.Error(), "multiple of 32 from 128 to 640") {
				t.Errorf("image size %s: %v", bad, err)
			}
		}
		s.preset("quick")
		c, err := s.read()
		if err != nil || c.Epochs != 3 || c.Batch != 16 || c.ImageSize != 128 || c.Data != detect.Builtin {
			t.Errorf("the quick preset: %+v %v", c, err)
		}
		if !strings.Contains(s.estimate.Text, "measured as it trains") {
			t.Errorf("estimate %q", s.estimate.Text)
		}
		test.Tap(wz.next)
		test.Tap(wz.train.start)
	})
	wz.wg.Wait()
	ui(func() {
		v := wz.train
		if !v.detecting || v.maps.Len(0) != 2 || v.maps.Len(1) != 2 || v.parts.Len(2) != 2 || v.acc.Len(1) != 0 {
			t.Errorf("detection charts: detecting %v, mAP points %d, parts %d, accuracy %d", v.detecting, v.maps.Len(0), v.parts.Len(2), v.acc.Len(1))
		}
		log := strings.Join(v.logLines, "\n")
		if !strings.Contains(log, "mAP50 0.600, mAP50-95 0.300") || strings.Contains(v.where.Text, "accuracy") || !strings.Contains(v.where.Text, "best mAP50-95 0.500") {
			t.Errorf("log:\n%s\nwhere: %q", log, v.where.Text)
		}
		test.Tap(wz.next)
	})
	wz.wg.Wait()
	ui(func() {
		r := wz.results
		if !strings.HasPrefix(r.summary.Text, "mAP50-95 0.500, mAP50 0.500 on the 2 validation images (2 objects)") || r.confuseHead.Visible() {
			t.Errorf("summary %q, confusion heading shown %v", r.summary.Text, r.confuseHead.Visible())
		}
		if !strings.Contains(labelsIn(r.table), "all (mean)") || !strings.Contains(labelsIn(r.table), "AP50-95") {
			t.Errorf("AP table: %s", labelsIn(r.table))
		}
		if n := len(r.samples.Objects); n != 8 || !strings.Contains(labelsIn(r.samples), "found") {
			t.Errorf("%d validation images: %s", n, labelsIn(r.samples))
		}
	})
	ui(func() { wz.results.tryImage() })
	wz.wg.Wait()
	ui(func() {
		r := wz.results
		if !r.tried.Visible() || !strings.Contains(labelsIn(r.tried), "street.png: 1 object scoring 0.25 or more") || !strings.Contains(labelsIn(r.tried), "3 0.80 at (4, 4)-(30, 40)") {
			t.Errorf("Try an image: %s / %q", labelsIn(r.tried), r.tryOut.Text)
		}
	})
	// Back to a classifier's set: the models and charts follow.
	ui(func() {
		wz.show(1)
		wz.dataView.load("builtin")
	})
	wz.wg.Wait()
	ui(func() {
		wz.show(2)
		if wz.detSet != nil || slices.Contains(wz.settings.model.Options, "det-n") {
			t.Errorf("a classifier's set keeps the detector: %v", wz.settings.model.Options)
		}
		wz.settings.leave()
		wz.train.reset()
		if wz.train.detecting {
			t.Error("the charts stay a detector's")
		}
	})
}

// labelsIn is the text of every label inside o, one a line.
func labelsIn(o fyne.CanvasObject) string {
	var out []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			out = append(out, w.Text)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return strings.Join(out, "\n")
}

func TestDrawBoxes(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	out := drawBoxes(img, 64, []drawnBox{{box: detect.Box{X1: 2, Y1: 2, X2: 6, Y2: 6}, colour: classColour(1), width: 2}})
	if out.Rect.Dx() != 64 || out.Rect.Dy() != 64 {
		t.Fatalf("a small image is enlarged by whole pixels to fit: %v", out.Rect)
	}
	if out.RGBAAt(16, 30) != classColour(1) || out.RGBAAt(17, 30) != classColour(1) || out.RGBAAt(18, 30) != (color.RGBA{A: 255}) || out.RGBAAt(30, 30) != (color.RGBA{A: 255}) {
		t.Fatalf("the box's border: %v %v %v %v", out.RGBAAt(16, 30), out.RGBAAt(17, 30), out.RGBAAt(18, 30), out.RGBAAt(30, 30))
	}
	big := image.NewRGBA(image.Rect(10, 10, 1010, 510)) // not at the origin
	out = drawBoxes(big, 500, []drawnBox{{box: detect.Box{X1: 100, Y1: 100, X2: 200, Y2: 200}, colour: truthColour, dashed: true, label: "cat"}})
	if out.Rect.Dx() != 500 || out.Rect.Dy() != 250 {
		t.Fatalf("a big image is scaled down to fit: %v", out.Rect)
	}
	if out.RGBAAt(50, 56) != truthColour || out.RGBAAt(50, 60) == truthColour {
		t.Fatalf("a dashed box: %v %v", out.RGBAAt(50, 56), out.RGBAAt(50, 60))
	}
	if out.RGBAAt(51, 40) != truthColour { // the label's chip above the corner
		t.Fatalf("no label chip: %v", out.RGBAAt(51, 40))
	}
}

func TestCaptions(t *testing.T) {
	classes := []string{"cat", "dog"}
	objs := []detect.Object{{Class: 1, Box: detect.Box{X2: 10, Y2: 10}}, {Class: 0, Box: detect.Box{X1: 20, X2: 30, Y2: 10}}, {Class: 1, Box: detect.Box{X1: 40, X2: 50, Y2: 10}}}
	if got := objectsCaption(objs, classes); got != "2 × dog, 1 × cat" {
		t.Errorf("objects: %q", got)
	}
	if got := objectsCaption(nil, classes); got != "no objects" {
		t.Errorf("no objects: %q", got)
	}
	dets := []detect.Detection{{Class: 1, Score: 0.9, Box: detect.Box{X2: 10, Y2: 10}}, {Class: 1, Score: 0.8, Box: detect.Box{X2: 10, Y2: 10}}, {Class: 1, Score: 0.7, Box: detect.Box{X1: 20, X2: 30, Y2: 10}}}
	if got := matchCaption(dets, objs); got != "✖ found 1 of 3 · 2 wrong" {
		t.Errorf("match: %q", got)
	}
	if got := matchCaption(dets[:1], objs[:1]); got != "✔ found 1 of 1 · 0 wrong" {
		t.Errorf("match: %q", got)
	}
	if checkDetectSize(0) != nil || checkDetectSize(640) != nil || checkDetectSize(96) == nil || detectSize(100) != 0 || detectSize(256) != 256 {
		t.Error("detector sizes")
	}
}

// TestGoldenDetection shows a detector's steps at 1024×700 (the built-in
// detection set, small; a scripted run; a fake detector) and compares each
// with its golden image (-update rewrites them).
func TestGoldenDetection(t *testing.T) {
	lockGoldenRoot(t)
	run := filepath.Join(goldenRoot, "runs", "detect")
	train := func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
		res, err := fakeDetectTrain(t)(ctx, cfg, ev, opts)
		res.RunDir = run
		return res, err
	}
	wz, loop := newTestWizard(t, Deps{Train: train, LoadDetect: smallBuiltin,
		LoadDetector: func(string) (cli.Detector, error) { return fakeDetector{}, nil }})
	loop.do(func() {
		wz.cfg.Project = filepath.Join(goldenRoot, "runs")
		wz.win.Resize(fyne.NewSize(1024, 700))
	})
	shot := func(name string) {
		t.Helper()
		wz.wg.Wait()
		loop.do(func() {
			if ms := wz.content.MinSize(); ms.Width > 1024 || ms.Height > 700 {
				t.Errorf("%s needs %v: more than 1024×700", name, ms)
			}
			assertImage(t, filepath.Join("golden", "detect-"+name+".png"), wz.win.Canvas().Capture())
		})
	}
	loop.do(func() {
		wz.show(1)
		wz.dataView.load(detect.Builtin)
	})
	shot("2-dataset")
	loop.do(func() {
		test.Tap(wz.next)
		wz.settings.preset("default")
	})
	shot("3-settings")
	loop.do(func() {
		test.Tap(wz.next)
		test.Tap(wz.train.start)
	})
	shot("4-train")
	loop.do(func() { test.Tap(wz.next) })
	shot("5-results")
}
