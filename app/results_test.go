package app

// Issue 19, 2, 3 and 6: class numbers, sample predictions and "Try an
// image" on the Results step.

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// labelText is the text of o, a label.
func labelText(t *testing.T, o fyne.CanvasObject) string {
	t.Helper()
	l, ok := o.(*widget.Label)
	if !ok {
		t.Fatalf("%T is not a label", o)
	}
	return l.Text
}

// digitsMetrics are the built-in digits' metrics: class i is named "i".
func digitsMetrics() *trainer.Metrics {
	m := &trainer.Metrics{Accuracy: 0.9}
	for i := range 10 {
		m.PerClass = append(m.PerClass, trainer.ClassMetrics{Class: strconv.Itoa(i), Support: 10})
		row := make([]int, 10)
		row[i] = 9
		row[(i+1)%10] = 1
		m.Confusion = append(m.Confusion, row)
	}
	return m
}

// Issue 19, 2: the per-class table and the confusion matrix number the
// classes as their names and labels do, from 0: digit 3 is 3.
func TestResultsNumberClassesByIndex(t *testing.T) {
	test.NewTempApp(t)
	m := digitsMetrics()
	names := classTable(m).(*fyne.Container).Objects[0].(*fyne.Container)
	rows := confusionTable(m).(*fyne.Container)
	side, cells := rows.Objects[0].(*fyne.Container), rows.Objects[1].(*fyne.Container)
	for i := range 10 {
		want := strconv.Itoa(i)
		if got := labelText(t, names.Objects[i+1]); got != want {
			t.Errorf("per-class row of digit %d reads %q", i, got)
		}
		if got := labelText(t, side.Objects[i+1]); got != want {
			t.Errorf("confusion row of digit %d reads %q", i, got)
		}
		if got := labelText(t, cells.Objects[i]); got != want {
			t.Errorf("confusion column of digit %d reads %q", i, got)
		}
	}
	long := longResult("").Val
	if got := classLabel(long, 3); got != "3  "+longClasses[3] {
		t.Errorf("a named class: %q", got)
	}
}

// Issue 19, 3: the samples' order goes round the classes, the same each
// time.
func TestSampleOrderRoundRobin(t *testing.T) {
	var labels []int32 // sorted by class, as many splits are
	for c := range 10 {
		for range 20 + c {
			labels = append(labels, int32(c))
		}
	}
	order := sampleOrder(labels, 10, sampleSeed)
	if len(order) != len(labels) {
		t.Fatalf("%d of %d images ordered", len(order), len(labels))
	}
	for round := range 20 {
		var classes []int32
		for _, i := range order[round*10 : round*10+10] {
			classes = append(classes, labels[i])
		}
		if want := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(classes, want) {
			t.Fatalf("round %d takes classes %v, want one of each", round, classes)
		}
	}
	if again := sampleOrder(labels, 10, sampleSeed); !slices.Equal(again, order) {
		t.Error("the order changes between calls: the samples would too")
	}
	if order[0] == 0 && order[10] == 1 {
		t.Error("each class's images are taken in file order, not shuffled")
	}
	seen := map[int]bool{}
	for _, i := range order {
		seen[i] = true
	}
	if len(seen) != len(labels) {
		t.Errorf("%d distinct images of %d", len(seen), len(labels))
	}
}

// classDataset is 10 classes of 4×4 grey images, 20 each, sorted by class;
// an image's pixels are 20 × its class.
func classDataset() *data.Dataset {
	ds := &data.Dataset{Format: "imagefolder", Channels: 1, Height: 4, Width: 4, Val: &data.Split{}, Train: &data.Split{}}
	for c := range 10 {
		ds.Classes = append(ds.Classes, "class "+strconv.Itoa(c))
		for range 20 {
			for range 16 {
				ds.Val.Pixels = append(ds.Val.Pixels, uint8(20*c))
			}
			ds.Val.Labels = append(ds.Val.Labels, int32(c))
		}
	}
	return ds
}

// pixelModel reads the class from the pixels: right for even classes,
// "class 0" for odd ones.
type pixelModel struct{}

func (pixelModel) PredictImage(img image.Image, _ string) ([]trainer.Prediction, error) {
	g := color.GrayModel.Convert(img.At(0, 0)).(color.Gray)
	c := int(g.Y) / 20
	if c%2 == 1 {
		c = 0
	}
	return []trainer.Prediction{{Class: "class " + strconv.Itoa(c), Prob: 0.9}}, nil
}

// Issue 19, 3: right and wrong samples come from every class that has
// some, not the first ones.
func TestSamplesSpreadOverClasses(t *testing.T) {
	ds := classDataset()
	wz, loop := newTestWizard(t, Deps{LoadModel: func(string) (Classifier, error) { return pixelModel{}, nil }})
	res := &trainer.Result{RunDir: t.TempDir(), Epochs: 1, BestEpoch: 1, Classes: ds.Classes, Val: &trainer.Metrics{Accuracy: 0.5}}
	loop.do(func() {
		wz.dataset, wz.result = ds, res
		wz.show(4)
	})
	wz.wg.Wait()
	right, wrong := map[string]int{}, map[string]int{}
	loop.do(func() {
		for _, o := range wz.results.samples.Objects {
			text := labelText(t, o.(*fyne.Container).Objects[0])
			switch {
			case strings.HasPrefix(text, "✔ "):
				right[strings.TrimPrefix(text, "✔ ")]++
			case strings.HasPrefix(text, "✖ "):
				_, truth, _ := strings.Cut(text, "(is ")
				wrong[strings.TrimSuffix(truth, ")")]++
			}
		}
	})
	if len(right) != 5 || len(wrong) != 5 || right["class 0"] > 2 || wrong["class 1"] > 2 {
		t.Fatalf("right samples by class %v, wrong by class %v: want the 5 even and the 5 odd classes, spread", right, wrong)
	}
}

// writePNG writes a w×h colour image.
func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// ranked answers the same top classes for every image.
type ranked []trainer.Prediction

func (r ranked) PredictImage(image.Image, string) ([]trainer.Prediction, error) { return r, nil }

// Issue 19, 6: "Try an image" shows the image (scaled, its aspect kept)
// with the prediction and the top classes.
func TestTryAnImageShowsIt(t *testing.T) {
	pic := filepath.Join(t.TempDir(), "cat.png")
	writePNG(t, pic, 300, 150)
	wz, loop := newTestWizard(t, Deps{
		PickFile: func(_ fyne.Window, done func(string)) { done(pic) },
		LoadModel: func(string) (Classifier, error) {
			return ranked{{Class: "cat", Prob: 0.8}, {Class: "dog", Prob: 0.15}, {Class: "car", Prob: 0.05}}, nil
		},
	})
	loop.do(func() {
		wz.result = &trainer.Result{RunDir: t.TempDir(), Epochs: 1, BestEpoch: 1, Val: &trainer.Metrics{Accuracy: 0.9}}
		wz.show(4)
	})
	wz.wg.Wait()
	loop.do(wz.results.tryImage)
	wz.wg.Wait()
	loop.do(func() {
		tried := wz.results.tried
		if !tried.Visible() || len(tried.Objects) != 2 {
			t.Fatalf("nothing shown: %d objects", len(tried.Objects))
		}
		img, ok := tried.Objects[0].(*canvas.Image)
		if !ok || img.Image == nil || img.Image.Bounds().Dx() != 300 || img.FillMode != canvas.ImageFillContain || img.MinSize().Width < 128 {
			t.Fatalf("the image: %T %+v", tried.Objects[0], img)
		}
		var lines []string
		for _, o := range tried.Objects[1].(*fyne.Container).Objects {
			lines = append(lines, labelText(t, o))
		}
		if want := []string{"cat.png", "Prediction: cat (80.0%)", "then dog (15.0%)", "then car (5.0%)"}; !slices.Equal(lines, want) {
			t.Errorf("text %q, want %q", lines, want)
		}
		wz.results.folder.SetText("Run folder: runs/train") // not the temporary one
		assertImage(t, "results-tried.png", wz.win.Canvas().Capture())
	})
}
