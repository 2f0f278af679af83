package trainer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/onnx"
	"gpuwizard/trainer/onnx/onnxpb"
)

// systemOpenCV is Debian's /usr/bin/python3 when it imports cv2
// (python3-opencv, which make deps installs). Under CI a missing OpenCV
// fails the test; elsewhere the test is skipped with what to install.
func systemOpenCV(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import cv2; print(cv2.__version__)").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("%s cannot import cv2 (Debian: apt-get install python3-opencv, which make deps installs): %v %s", py, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Logf("OpenCV %s", strings.TrimSpace(string(out)))
	return py
}

// colourDataset writes a 3-class folder of 16×16 colour PNGs: each class
// has one dominant channel, with noise.
func colourDataset(t *testing.T, perClass int) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewSource(3))
	for c, name := range []string{"red", "green", "blue"} {
		for i := 0; i < perClass; i++ {
			img := image.NewRGBA(image.Rect(0, 0, 16, 16))
			for y := 0; y < 16; y++ {
				for x := 0; x < 16; x++ {
					v := [3]uint8{uint8(rng.Intn(120)), uint8(rng.Intn(120)), uint8(rng.Intn(120))}
					v[c] = uint8(120 + rng.Intn(136))
					img.Set(x, y, color.RGBA{v[0], v[1], v[2], 255})
				}
			}
			if err := synth.WritePNG(filepath.Join(root, name, fmt.Sprintf("%03d.png", i)), img); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// testImages writes images for a model to predict: some of the dataset's
// own, others of another size (predict resizes them) and noise.
func testImages(t *testing.T, data string, n int) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".png") && len(out) < n/2 {
			out = append(out, p)
		}
		return nil
	})
	rng := rand.New(rand.NewSource(int64(n)))
	dir := t.TempDir()
	for i := len(out); i < n; i++ {
		w, h := 5+rng.Intn(40), 5+rng.Intn(40)
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for k := range img.Pix {
			img.Pix[k] = uint8(rng.Intn(256))
		}
		p := filepath.Join(dir, fmt.Sprintf("noise%02d.png", i))
		if err := synth.WritePNG(p, img); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// openCVProbs runs model on inputs (each C×H×W) with OpenCV's DNN module.
func openCVProbs(t *testing.T, py, model string, inputs [][]float32, c, h, w int) [][]float64 {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "inputs.f32")
	var b []byte
	for _, x := range inputs {
		for _, v := range x {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	if err := os.WriteFile(raw, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join("testdata", "onnx_opencv.py"), model, raw}
	for _, d := range []int{len(inputs), c, h, w} {
		args = append(args, strconv.Itoa(d))
	}
	cmd := exec.Command(py, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("OpenCV on %s: %v\n%s", model, err, stderr.String())
	}
	var probs [][]float64
	if err := json.Unmarshal(out, &probs); err != nil {
		t.Fatalf("OpenCV's output: %v: %s", err, out)
	}
	return probs
}

// An exported model run by OpenCV's DNN module gives the top-1 class
// predict gives for every test image, and every probability within 1e-4,
// for the MLP, LeNet-5 and the CNN (batch norm exported as
// BatchNormalization).
func TestONNXExportMatchesPredictInOpenCV(t *testing.T) {
	py := systemOpenCV(t)
	grey, colour := tinyDataset(t, 20), colourDataset(t, 20)
	for _, c := range []struct {
		kind, data string
		size       int
	}{{"mlp", grey, 8}, {"lenet", grey, 28}, {"cnn", colour, 16}} {
		t.Run(c.kind, func(t *testing.T) {
			cfg := tinyConfig(t, c.data)
			cfg.Model, cfg.ImageSize, cfg.Epochs = c.kind, c.size, 2
			_, res, err := collect(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			model := filepath.Join(t.TempDir(), c.kind+".onnx")
			if err := ExportONNX(res.RunDir, model); err != nil {
				t.Fatal(err)
			}
			checkONNXMetadata(t, model, res.Classes, c.size)
			p, err := LoadPredictor(res.RunDir)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			compareWithOpenCV(t, py, model, p, testImages(t, c.data, 24))
		})
	}
}

// compareWithOpenCV predicts each image as gpuwizard predict does and
// runs the model's input for it through OpenCV.
func compareWithOpenCV(t *testing.T, py, model string, p *Predictor, images []string) {
	t.Helper()
	s := p.ck.Spec
	var inputs [][]float32
	var want [][]Prediction
	for _, path := range images {
		preds, err := p.PredictFile(path, "no")
		if err != nil {
			t.Fatal(err)
		}
		img, err := data.DecodeImageFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs, want = append(inputs, p.Input(img, "no")), append(want, preds)
	}
	got := openCVProbs(t, py, model, inputs, s.Channels, s.Height, s.Width)
	if len(got) != len(images) {
		t.Fatalf("OpenCV classified %d of %d images", len(got), len(images))
	}
	worst := 0.0
	for i, preds := range want {
		if len(got[i]) != s.Classes {
			t.Fatalf("%s: OpenCV gave %d probabilities for %d classes", images[i], len(got[i]), s.Classes)
		}
		if top := argmax64(got[i]); top != preds[0].Index {
			t.Errorf("%s: OpenCV's top class is %d (%.6f), predict's %d (%.6f)", images[i], top, got[i][top], preds[0].Index, preds[0].Prob)
		}
		for _, pr := range preds {
			d := math.Abs(got[i][pr.Index] - pr.Prob)
			worst = max(worst, d)
			if d > 1e-4 {
				t.Errorf("%s: class %d: OpenCV %.7f, predict %.7f", images[i], pr.Index, got[i][pr.Index], pr.Prob)
			}
		}
	}
	t.Logf("%s: %d images, top-1 equal, largest probability difference %.2g", filepath.Base(model), len(images), worst)
}

func argmax64(v []float64) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// checkONNXMetadata reads the file back with the ONNX schema: the
// versions, the input and the metadata a user of the file needs.
func checkONNXMetadata(t *testing.T, path string, classes []string, size int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for _, e := range m.GetMetadataProps() {
		meta[e.GetKey()] = e.GetValue()
	}
	var names []string
	if err := json.Unmarshal([]byte(meta["classes"]), &names); err != nil || strings.Join(names, "|") != strings.Join(classes, "|") {
		t.Errorf("classes in the metadata: %q (%v), want %q", meta["classes"], err, classes)
	}
	if want := fmt.Sprintf("%dx%d", size, size); meta["input_size"] != want || !strings.Contains(meta["preprocessing"], "[0, 1]") {
		t.Errorf("input size %q (want %s), preprocessing %q", meta["input_size"], want, meta["preprocessing"])
	}
	in := m.GetGraph().GetInput()
	if m.GetIrVersion() != onnx.IRVersion || m.GetOpsetImport()[0].GetVersion() != onnx.Opset || len(in) != 1 || in[0].GetName() != onnx.InputName ||
		len(in[0].GetType().GetTensorType().GetShape().GetDim()) != 4 || m.GetGraph().GetOutput()[0].GetName() != onnx.OutputName {
		t.Errorf("the model's header or input: IR %d, opset %v, input %v", m.GetIrVersion(), m.GetOpsetImport(), in)
	}
}

// A second export to the same file is refused and leaves the first.
func TestONNXExportRefusesAnExistingFile(t *testing.T) {
	dir := finishedRunAny(t)
	out := filepath.Join(t.TempDir(), "m.onnx")
	if err := ExportONNX(dir, out); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	if err := ExportONNX(dir, out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("exporting over a file: %v", err)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) || len(before) == 0 {
		t.Fatal("the first export changed")
	}
	if err := ExportONNX(filepath.Join(dir, "nothing"), filepath.Join(t.TempDir(), "x.onnx")); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("exporting a missing checkpoint: %v", err)
	}
}

// finishedRunAny trains the tiny model for one epoch and returns its folder.
func finishedRunAny(t *testing.T) string {
	t.Helper()
	cfg := tinyConfig(t, tinyDataset(t, 10))
	cfg.Epochs = 1
	_, res, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.RunDir
}

// The predictor runs the evaluation program on the executor, the numeric
// path of validation: classifying the validation images one at a time
// gives the run's validation accuracy exactly.
func TestPredictorTakesValidationsPath(t *testing.T) {
	cfg := tinyConfig(t, colourDataset(t, 30))
	cfg.Model, cfg.ImageSize, cfg.Epochs, cfg.ValSplit = "cnn", 16, 1, 0.3
	_, res, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadPredictor(res.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ds, err := data.Load(cfg.Data, cfg.DataOptions())
	if err != nil {
		t.Fatal(err)
	}
	b := data.NewBatcher(ds.Val, ds.ImageSize(), len(ds.Classes), 1)
	b.Rewind()
	right, n := 0, 0
	for b.Next() {
		probs, err := p.Probabilities(b.X)
		if err != nil {
			t.Fatal(err)
		}
		if argmax64(probs) == int(ds.Val.Labels[b.Idx[0]]) {
			right++
		}
		n++
	}
	if acc := float64(right) / float64(n); n < 20 || acc != res.Val.Accuracy {
		t.Fatalf("the predictor is right on %d of %d validation images (%.4f); the run measured %.4f", right, n, acc, res.Val.Accuracy)
	}
	p.Close()
	if _, err := p.Probabilities(b.X); err == nil {
		t.Fatal("a closed predictor predicted")
	}
}
