package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuwizard/trainer/detect"
)

// squares is a tiny detection set a detector learns in seconds: on
// size×size grey canvases with faint noise, one to two squares each,
// filled (class "solid") or outlined (class "ring"), 10 to 20 pixels a
// side.
func squares(seed int64, size, nTrain, nVal int) *detect.Dataset {
	rng := rand.New(rand.NewSource(seed))
	split := func(n int) *detect.Split {
		sp := &detect.Split{Pixels: make([]uint8, n*size*size)}
		for i := 0; i < n; i++ {
			px := sp.Pixels[i*size*size : (i+1)*size*size]
			for k := range px {
				px[k] = uint8(rng.Intn(40))
			}
			im := detect.Image{Index: i, Letterbox: detect.Letterbox{Scale: 1, OrigW: size, OrigH: size}}
			for len(im.Objects) < 1+rng.Intn(2) {
				s := 10 + rng.Intn(11)
				x, y := rng.Intn(size-s), rng.Intn(size-s)
				b := detect.Box{X1: float32(x), Y1: float32(y), X2: float32(x + s), Y2: float32(y + s)}
				if len(im.Objects) == 1 && detect.IoU(im.Objects[0].Box, b) > 0 {
					continue
				}
				cls := rng.Intn(2)
				for dy := 0; dy < s; dy++ {
					for dx := 0; dx < s; dx++ {
						edge := dx < 2 || dy < 2 || dx >= s-2 || dy >= s-2
						if cls == 0 || edge {
							px[(y+dy)*size+x+dx] = 230
						}
					}
				}
				im.Objects = append(im.Objects, detect.Object{Class: cls, Box: b})
			}
			sp.Images = append(sp.Images, im)
		}
		return sp
	}
	return &detect.Dataset{Name: "squares", Root: "squares", Format: "test", Classes: []string{"solid", "ring"},
		Size: size, Channels: 1, Train: split(nTrain), Val: split(nVal)}
}

func detectConfig(t testing.TB, size int) Config {
	c := Defaults()
	c.Data, c.Task, c.Model, c.ImageSize = "squares", TaskDetect, "det-n", size
	c.Epochs, c.Batch, c.LR, c.WarmupEpochs = 12, 16, 0.005, 1
	c.Project = filepath.Join(t.TempDir(), "runs")
	return c
}

// TestDetectorTrainsEndToEnd trains det-n on the squares set at 64 px:
// the loss terms fall, the validation mAP rises well above chance, the
// run folder holds the detector's results.csv columns and results.json's
// metrics, and the predictor finds a square drawn on a larger image in
// that image's own pixels.
func TestDetectorTrainsEndToEnd(t *testing.T) {
	const size = 64
	ds := squares(1, size, 128, 48)
	cfg := detectConfig(t, size)
	evs, res, err := collect(context.Background(), cfg, Options{DetectDataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	h := res.History
	if len(h) != cfg.Epochs {
		t.Fatalf("%d epochs in the history, want %d", len(h), cfg.Epochs)
	}
	first, last := h[0], h[len(h)-1]
	t.Logf("epoch 1: box %.3f cls %.3f obj %.3f mAP50 %.3f; epoch %d: box %.3f cls %.3f obj %.3f mAP50 %.3f mAP50-95 %.3f",
		first.BoxLoss, first.ClsLoss, first.ObjLoss, first.MAP50, last.Epoch, last.BoxLoss, last.ClsLoss, last.ObjLoss, last.MAP50, last.MAP5095)
	if !(last.BoxLoss < first.BoxLoss && last.ObjLoss < first.ObjLoss && last.ClsLoss < first.ClsLoss) {
		t.Errorf("the loss terms did not fall: %+v then %+v", first, last)
	}
	// The validation loss: its terms, summed in ValLoss, fall as well.
	if !(last.ValBoxLoss < first.ValBoxLoss && last.ValObjLoss < first.ValObjLoss && last.ValClsLoss > 0) ||
		math.Abs(last.ValLoss-(last.ValBoxLoss+last.ValClsLoss+last.ValObjLoss)) > 1e-9 {
		t.Errorf("validation loss terms: %+v then %+v", first, last)
	}
	if res.Detect == nil || res.Detect.MAP50 < 0.5 || res.Detect.MAP5095 < 0.2 || len(res.Detect.PerClass) != 2 {
		t.Fatalf("best model on val: %+v; want mAP50 ≥ 0.5, mAP50-95 ≥ 0.2 and both classes", res.Detect)
	}
	epochEvents := 0
	for _, e := range evs {
		if e.Kind == EventEpoch {
			epochEvents++
			if e.MAP50 == 0 && e.Epoch == cfg.Epochs || e.BoxLoss == 0 || e.ValLoss == 0 {
				t.Errorf("epoch event without the detector's figures: %+v", e)
			}
		}
	}
	if epochEvents != cfg.Epochs {
		t.Errorf("%d epoch events, want %d", epochEvents, cfg.Epochs)
	}
	csv, err := os.ReadFile(filepath.Join(res.RunDir, "results.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "epoch,time,train/box_loss,train/cls_loss,train/obj_loss,metrics/mAP50,metrics/mAP50-95,val/box_loss,val/cls_loss,val/obj_loss,lr/pg0,") ||
		strings.Count(string(csv), "\n") != cfg.Epochs+1 {
		t.Fatalf("results.csv: %v\n%s", err, csv)
	}
	var saved Result
	raw, err := os.ReadFile(filepath.Join(res.RunDir, ResultsFile))
	if err != nil || json.Unmarshal(raw, &saved) != nil || saved.Detect == nil || saved.Detect.MAP50 != res.Detect.MAP50 {
		t.Fatalf("results.json: %v\n%s", err, raw)
	}
	checkDetector(t, res.RunDir)
}

// checkDetector draws a solid square on a wide image (letterboxed to the
// model's canvas with grey bars) and wants it found in the image's
// pixels.
func checkDetector(t *testing.T, run string) {
	det, err := LoadDetector(filepath.Join(run, "best"))
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	if got := det.Classes(); len(got) != 2 || got[0] != "solid" {
		t.Fatalf("classes %v", got)
	}
	img := image.NewRGBA(image.Rect(0, 0, 128, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 128; x++ {
			img.Set(x, y, color.RGBA{20, 20, 20, 255})
		}
	}
	want := detect.Box{X1: 66, Y1: 14, X2: 96, Y2: 44} // 15 px a side on the 64 px canvas
	for y := int(want.Y1); y < int(want.Y2); y++ {
		for x := int(want.X1); x < int(want.X2); x++ {
			img.Set(x, y, color.RGBA{230, 230, 230, 255})
		}
	}
	dets, err := det.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(dets) == 0 || dets[0].Class != 0 || detect.IoU(dets[0].Box, want) < 0.5 {
		t.Fatalf("detections %+v, want a solid square near %+v (image pixels)", dets, want)
	}
	if _, err := LoadPredictor(filepath.Join(run, "best")); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "LoadDetector") {
		t.Fatalf("the classifier's predictor on a detector: %v", err)
	}
}

// TestDetectConfig: the task follows the data under auto, a detector is
// refused for classification and a classifier for detection, and the
// canvas size has its own bounds.
func TestDetectConfig(t *testing.T) {
	c := Defaults()
	c.Data = detect.Builtin
	if !c.IsDetect() || c.DetectSize() != BuiltinDetectSize || c.Validate() != nil {
		t.Fatalf("builtin-detect under auto: detect %v, size %d, %v", c.IsDetect(), c.DetectSize(), c.Validate())
	}
	yaml := filepath.Join(t.TempDir(), "data.yaml")
	c.Data = yaml
	if !c.IsDetect() || c.DetectSize() != DefaultDetectSize {
		t.Fatalf("%s: detect %v size %d", yaml, c.IsDetect(), c.DetectSize())
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Model = "cnn" },
		func(c *Config) { c.ImageSize = 100 },
		func(c *Config) { c.ImageSize = 136 }, // the model takes it (stride 8), the loader does not (32)
		func(c *Config) { c.ImageSize = 1024 },
		func(c *Config) { c.Task = "segment" },
		func(c *Config) { c.Task, c.Model = TaskClassify, "det-s" },
	} {
		d := c
		bad(&d)
		if err := d.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: want a config error, got %v", d, err)
		}
	}
	c.Data = "builtin"
	if c.IsDetect() {
		t.Fatal("builtin (MNIST) is classification")
	}
}

// TestDetectorONNXMatchesOpenCV: a detector exported to ONNX, run by
// OpenCV's DNN module, gives the raw head the executor gives (within
// 1e-4 of its scale) and so the same boxes, on letterboxed images of
// several shapes; the file says how to decode the head.
func TestDetectorONNXMatchesOpenCV(t *testing.T) {
	py := systemOpenCV(t)
	const size = 64
	cfg := detectConfig(t, size)
	cfg.Epochs = 2
	_, res, err := collect(context.Background(), cfg, Options{DetectDataset: squares(2, size, 64, 16)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "det.onnx")
	if err := ExportONNX(res.RunDir, path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(raw), "sigmoid(objectness)") || !strings.Contains(string(raw), `"solid"`) {
		t.Fatalf("the ONNX file lacks the decoding or the classes: %v", err)
	}
	det, err := LoadDetector(res.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	det.Conf = 0.05
	rng := rand.New(rand.NewSource(4))
	var inputs, heads [][]float32
	for _, wh := range [][2]int{{48, 48}, {96, 40}, {30, 70}, {100, 100}} {
		img := image.NewRGBA(image.Rect(0, 0, wh[0], wh[1]))
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.Intn(256))
		}
		x, _ := det.Input(img)
		h, err := det.Head(x)
		if err != nil {
			t.Fatal(err)
		}
		inputs, heads = append(inputs, x), append(heads, h)
	}
	got := openCVProbs(t, py, path, inputs, 1, size, size)
	h, w := det.ck.Spec.Grid()
	g := detect.Grid{H: h, W: w, Stride: 8}
	for i, want := range heads {
		if len(got[i]) != len(want) {
			t.Fatalf("image %d: OpenCV gave %d head values, the executor %d", i, len(got[i]), len(want))
		}
		var worst, scale float64
		o := make([]float32, len(want))
		for k, v := range want {
			o[k] = float32(got[i][k])
			worst = max(worst, math.Abs(got[i][k]-float64(v)))
			scale = max(scale, math.Abs(float64(v)))
		}
		if worst > 1e-4*max(scale, 1) {
			t.Errorf("image %d: head values differ by up to %.3g (largest value %.3g)", i, worst, scale)
		}
		a := detect.Detections(want, 2, g, size, 0.05, 0.45, 100)
		b := detect.Detections(o, 2, g, size, 0.05, 0.45, 100)
		if len(a) != len(b) {
			t.Errorf("image %d: %d boxes from the executor's head, %d from OpenCV's", i, len(a), len(b))
		}
	}
}
