package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer"
	"gpuwizard/trainer/detect"
)

// TestDetectorUserPath is what a user does with a YOLO set, through the
// real loader, trainer and detector: `train --data DIR/data.yaml` (an
// Ultralytics layout with a list file and names as a map, wide images
// letterboxed) reaches a validation mAP50 well above chance and records
// it in results.json and results.csv; `predict --json` on a validation
// image finds its squares in the image's own pixels; `--save-txt` writes
// them as YOLO labels.
func TestDetectorUserPath(t *testing.T) {
	set, err := synth.Squares(t.TempDir(), 160, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(t.TempDir(), "runs")
	code, _, stderr := call(t, Train, nil, "--data", set.YAML, "--model", "det-n", "--image-size", "64", "--epochs", "10",
		"--batch", "16", "--lr", "0.005", "--project", project, "--name", "sq", "--json")
	if code != ExitOK {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	run := filepath.Join(project, "sq")
	var res trainer.Result
	raw, err := os.ReadFile(filepath.Join(run, trainer.ResultsFile))
	if err != nil || json.Unmarshal(raw, &res) != nil || res.Detect == nil {
		t.Fatalf("results.json (%v):\n%s", err, raw)
	}
	t.Logf("val: mAP50 %.3f mAP50-95 %.3f (best epoch %d)", res.Detect.MAP50, res.Detect.MAP5095, res.BestEpoch)
	if res.Detect.MAP50 < 0.5 || res.Detect.Images != 32 || len(res.Detect.PerClass) != 2 || res.Detect.PerClass[1].Class != "ring" {
		t.Fatalf("best model on val: %+v; want mAP50 ≥ 0.5 on the 32 listed images, both classes", res.Detect)
	}
	csv, err := os.ReadFile(filepath.Join(run, "results.csv"))
	if err != nil || !strings.Contains(string(csv), "metrics/mAP50,metrics/mAP50-95") {
		t.Fatalf("results.csv (%v):\n%s", err, csv)
	}
	checkPredictJSON(t, run, set)
	checkSaveTxt(t, run, set)
}

// checkPredictJSON: predict --json finds at least half of the eight
// first validation images' squares (class, and IoU ≥ 0.5 in the image's
// own pixels; chance finds none).
func checkPredictJSON(t *testing.T, run string, set *synth.SquaresSet) {
	paths := set.ValPaths[:8]
	code, out, stderr := call(t, Predict, nil, append([]string{"--model", filepath.Join(run, "best"), "--json"}, paths...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != len(paths) {
		t.Fatalf("predict: exit %d, %d lines for %d images\n%s\n%s", code, len(lines), len(paths), out, stderr)
	}
	found, total := 0, 0
	for i, line := range lines {
		var got struct {
			Image string
			Boxes []struct {
				Class int
				Name  string
				Score float64
				Box   [4]float32
			}
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil || got.Image != paths[i] {
			t.Fatalf("line %q: %v", line, err)
		}
		for _, want := range set.ValBoxes[i] {
			total++
			wb := detect.Box{X1: float32(want.X1), Y1: float32(want.Y1), X2: float32(want.X2), Y2: float32(want.Y2)}
			for _, b := range got.Boxes {
				if b.Class == want.Class && b.Name == []string{"solid", "ring"}[want.Class] &&
					detect.IoU(detect.Box{X1: b.Box[0], Y1: b.Box[1], X2: b.Box[2], Y2: b.Box[3]}, wb) >= 0.5 {
					found++
					break
				}
			}
		}
	}
	if found*2 < total {
		t.Fatalf("predict found %d of %d squares (class and IoU ≥ 0.5 in the image's pixels):\n%s", found, total, out)
	}
}

// checkSaveTxt: --save-txt writes a validation image's squares as YOLO
// label lines, normalised by its size, near the truth.
func checkSaveTxt(t *testing.T, run string, set *synth.SquaresSet) {
	dir := filepath.Join(t.TempDir(), "labels")
	img := set.ValPaths[0]
	code, _, stderr := call(t, Predict, nil, "--model", filepath.Join(run, "best"), "--save-txt", dir, img)
	if code != ExitOK {
		t.Fatalf("predict --save-txt: exit %d\n%s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(img), ".png")+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	want := set.ValBoxes[0][0]
	W, H := float64(set.ValSizes[0].X), float64(set.ValSizes[0].Y)
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 5 {
			t.Fatalf("label line %q: want class cx cy w h", line)
		}
		v := make([]float64, 5)
		for i, s := range f {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("label line %q: %v", line, err)
			}
		}
		cx, cy := float64(want.X1+want.X2)/2/W, float64(want.Y1+want.Y2)/2/H
		if int(v[0]) == want.Class && math.Abs(v[1]-cx) < 0.05 && math.Abs(v[2]-cy) < 0.05 {
			return
		}
	}
	t.Fatalf("the labels of %s do not hold its square %+v:\n%s", img, want, raw)
}
