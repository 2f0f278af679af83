package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer"
	"gpuwizard/trainer/detect"
)

// fakeDetector finds the same three boxes in every image, in its own
// order (not by score); it fails on images narrower than 10 pixels.
type fakeDetector struct{ seen []image.Point }

func (f *fakeDetector) Detect(img image.Image) ([]detect.Detection, error) {
	f.seen = append(f.seen, img.Bounds().Size())
	if img.Bounds().Dx() < 10 {
		return nil, errors.New("the fake detector wants 10 pixels")
	}
	return []detect.Detection{
		{Class: 1, Score: 0.3, Box: detect.Box{X1: 50, Y1: 0, X2: 100, Y2: 50}},
		{Class: 0, Score: 0.9, Box: detect.Box{X1: 10, Y1: 5, X2: 30.123456, Y2: 25}},
		{Class: 7, Score: 0.1, Box: detect.Box{X1: 0, Y1: 0, X2: 1, Y2: 1}},
		{Class: 0, Score: 0.95, Box: detect.Box{X1: 200, Y1: 0, X2: 300, Y2: 10}},                // outside: dropped
		{Class: 1, Score: 0.3, Box: detect.Box{X1: -5, Y1: 40, X2: 20, Y2: float32(math.NaN())}}, // clipped to nothing
	}, nil
}

func (f *fakeDetector) Classes() []string { return []string{"cat", "dog"} }

// callWith runs cmd with env's streams replaced by buffers.
func callWith(env Env, cmd func(context.Context, []string, Env) int, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	code := cmd(context.Background(), args, env)
	return code, out.String(), errb.String()
}

// grey writes a w×h grey PNG.
func grey(t *testing.T, path string, w, h int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := synth.WritePNG(path, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
}

func TestPredictBoxesJSON(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.png")
	grey(t, a, 100, 50)
	fake := &fakeDetector{}
	env := Env{LoadDetector: func(string) (Detector, error) { return fake, nil }}
	code, out, stderr := callWith(env, Predict, "--model", "runs/detect/best", "--json", a, filepath.Join(dir, "missing.png"))
	if got := clipBox(detect.Box{X1: -5, Y1: 40, X2: 120, Y2: 45}, 100, 50); got != (detect.Box{X1: 0, Y1: 40, X2: 100, Y2: 45}) {
		t.Fatalf("clipBox: %+v", got)
	}
	if code != ExitUsage || !strings.Contains(stderr, "missing.png") {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("one line per image:\n%s", out)
	}
	// The line as the issue has it, boxes by falling score, those under
	// --conf 0.25 left out, corners to the hundredth of a pixel.
	aJSON := jsonString(a) // Windows' backslashes escaped
	want := `{"image":` + aJSON + `,"boxes":[{"class":0,"name":"cat","score":0.9,"box":[10,5,30.12,25]},{"class":1,"name":"dog","score":0.3,"box":[50,0,100,50]}]}`
	if lines[0] != want {
		t.Fatalf("got  %s\nwant %s", lines[0], want)
	}
	var bad struct{ Image, Error string }
	if err := json.Unmarshal([]byte(lines[1]), &bad); err != nil || !strings.HasSuffix(bad.Image, "missing.png") || !strings.Contains(bad.Error, "no such file") {
		t.Fatalf("an unreadable image: %s", lines[1])
	}
	if len(fake.seen) != 1 || fake.seen[0] != image.Pt(100, 50) {
		t.Fatalf("the detector saw %v: the image at its own size", fake.seen)
	}
	// --conf 0 keeps all three (the unknown class by its number); an
	// image without boxes has "boxes": [].
	code, out, _ = callWith(env, Predict, "--model", "m", "--json", "--conf", "0", a)
	if code != ExitOK || !strings.Contains(out, `{"class":7,"name":"7","score":0.1,"box":[0,0,1,1]}`) {
		t.Fatalf("--conf 0: %d %s", code, out)
	}
	code, out, _ = callWith(env, Predict, "--model", "m", "--json", "--conf", "0.95", a)
	if code != ExitOK || strings.TrimSpace(out) != `{"image":`+aJSON+`,"boxes":[]}` {
		t.Fatalf("--conf 0.95: %d %s", code, out)
	}
	code, out, _ = callWith(env, Predict, "--model", "m", a)
	if code != ExitOK || strings.TrimSpace(out) != a+": 2 objects: cat 0.90 at (10, 5)-(30, 25); dog 0.30 at (50, 0)-(100, 50)" {
		t.Fatalf("text: %d %q", code, out)
	}
	for _, c := range []string{"2", "-0.1", "NaN"} {
		if code, _, stderr := callWith(env, Predict, "--model", "m", "--conf", c, a); code != ExitUsage || !strings.Contains(stderr, "--conf") {
			t.Fatalf("--conf %s: %d %s", c, code, stderr)
		}
	}
	// A detector's failure on one image is that image's line.
	small := filepath.Join(dir, "small.png")
	grey(t, small, 5, 5)
	code, out, stderr = callWith(env, Predict, "--model", "m", "--json", small, a)
	if code != ExitFailed || !strings.Contains(stderr, "wants 10 pixels") || !strings.Contains(out, `"error":`+jsonString(small+": the fake detector wants 10 pixels")) || !strings.Contains(out, `"name":"cat"`) {
		t.Fatalf("a failing image: %d %s %s", code, out, stderr)
	}
}

// TestPredictSaveTxt: --save-txt writes YOLO label files of the boxes,
// normalised by the image's size; two images of one name are not written
// over each other.
func TestPredictSaveTxt(t *testing.T) {
	dir := t.TempDir()
	a, b, other := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.jpeg.png"), filepath.Join(dir, "sub", "a.png")
	grey(t, a, 100, 50)
	grey(t, b, 200, 100)
	grey(t, other, 100, 50)
	labels := filepath.Join(t.TempDir(), "out", "labels")
	env := Env{LoadDetector: func(string) (Detector, error) { return &fakeDetector{}, nil }}
	code, _, stderr := callWith(env, Predict, "--model", "m", "--save-txt", labels, "--save-conf", a, b, other)
	if code != ExitUsage || !strings.Contains(stderr, "its labels would overwrite "+a+"'s") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(labels, "a.txt"))
	if err != nil || string(got) != "0 0.200617 0.300000 0.201235 0.400000 0.9000\n1 0.750000 0.500000 0.500000 1.000000 0.3000\n" {
		t.Fatalf("a.txt (%v):\n%s", err, got)
	}
	got, err = os.ReadFile(filepath.Join(labels, "b.jpeg.txt"))
	if err != nil || !strings.HasPrefix(string(got), "0 0.100309 0.150000 0.100617 0.200000 0.9000\n") {
		t.Fatalf("b.jpeg.txt (%v):\n%s", err, got)
	}
	// Without --save-conf, five numbers a line; no box: an empty file.
	code, _, _ = callWith(env, Predict, "--model", "m", "--save-txt", labels, "--conf", "0.5", b)
	got, _ = os.ReadFile(filepath.Join(labels, "b.jpeg.txt"))
	if code != ExitOK || string(got) != "0 0.100309 0.150000 0.100617 0.200000\n" {
		t.Fatalf("without --save-conf: %d %q", code, got)
	}
	code, _, _ = callWith(env, Predict, "--model", "m", "--save-txt", labels, "--conf", "1", b)
	if got, _ = os.ReadFile(filepath.Join(labels, "b.jpeg.txt")); code != ExitOK || len(got) != 0 {
		t.Fatalf("no boxes: %d %q", code, got)
	}
	// A --save-txt that is a file cannot be a folder.
	if code, _, stderr := callWith(env, Predict, "--model", "m", "--save-txt", a, b); code != ExitUsage || !strings.Contains(stderr, "--save-txt") {
		t.Fatalf("--save-txt on a file: %d %s", code, stderr)
	}
}

// TestPredictClassifierIsNoDetector: a classifier's checkpoint is not
// taken for a detector, and --save-txt says it is for detectors.
func TestPredictClassifierIsNoDetector(t *testing.T) {
	run, data := trainTiny(t)
	d, err := LoadDetector(filepath.Join(run, "best"))
	if err != nil || d != nil {
		t.Fatalf("a classifier loaded as a detector: %v, %v", d, err)
	}
	img := filepath.Join(data, "right", "000.png")
	code, _, stderr := call(t, Predict, nil, "--model", run, "--save-txt", t.TempDir(), img)
	if code != ExitUsage || !strings.Contains(stderr, "this model is a classifier") {
		t.Fatalf("--save-txt with a classifier: %d %s", code, stderr)
	}
	if code, out, _ := call(t, Predict, nil, "--model", run, img); code != ExitOK || !strings.HasPrefix(out, img+":  right ") {
		t.Fatalf("classifying still works: %d %s", code, out)
	}
}

// TestShowDetection: a detection run's epochs print their losses by part
// and mAP, its progress line no accuracy, and its result the AP table.
func TestShowDetection(t *testing.T) {
	var errb bytes.Buffer
	env := Env{Stdout: &bytes.Buffer{}, Stderr: &errb, Terminal: true, Columns: func() int { return 200 }}
	events := make(chan trainer.Event, 8)
	events <- trainer.Event{Kind: trainer.EventStep, Epoch: 1, Epochs: 2, Step: 5, Steps: 5, Loss: 2.5, ImagesPerSec: 40, ETA: time.Minute}
	events <- trainer.Event{Kind: trainer.EventEpoch, Epoch: 1, Epochs: 2, Loss: 2.5, BoxLoss: 1.25, ClsLoss: 0.75, ObjLoss: 0.5, ValLoss: 2.25, MAP50: 0.512, MAP5095: 0.301, LR: 1e-3, Best: true}
	close(events)
	show(events, env, false, true)
	out := errb.String()
	if !strings.Contains(out, "epoch 1/2  train loss 2.5000 (box 1.2500 cls 0.7500 obj 0.5000)  val loss 2.2500  mAP50 0.512 mAP50-95 0.301") || !strings.Contains(out, "← best") {
		t.Fatalf("epoch line:\n%s", out)
	}
	if strings.Contains(out, "acc") {
		t.Fatalf("a detector's progress shows an accuracy:\n%s", out)
	}
	var res bytes.Buffer
	m := detect.Evaluate([][]detect.Detection{{{Class: 0, Score: 0.9, Box: detect.Box{X2: 10, Y2: 10}}}}, [][]detect.Object{{{Class: 0, Box: detect.Box{X2: 10, Y2: 10}}}}, []string{"cat\x1b[2J"})
	m.Split = "val"
	printResult(&res, &trainer.Result{RunDir: "runs/det", BestEpoch: 3, Detect: &m})
	text := res.String()
	if !strings.Contains(text, "val: mAP50-95 1.000 · mAP50 1.000") || !strings.Contains(text, "cat\\x1b[2J") ||
		!strings.Contains(text, "gpuwizard predict --model "+filepath.Join("runs", "det", "best")+" --json IMAGE") {
		t.Fatalf("result:\n%s", text)
	}
	if !detectionData(detect.Builtin) || detectionData("builtin") {
		t.Fatal("detectionData")
	}
}

// jsonString is s as a JSON string (a Windows path's backslashes escaped).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
