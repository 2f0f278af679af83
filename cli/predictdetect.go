package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/internal/printable"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/model"
)

// Detector finds objects in images: a trained detector
// (*trainer.Detector); tests pass a fake.
type Detector interface {
	// Detect returns the boxes in img's own pixels.
	Detect(img image.Image) ([]detect.Detection, error)
	Classes() []string
}

var _ Detector = (*trainer.Detector)(nil)

// LoadDetector loads the checkpoint at path as a detector, or returns
// nil, nil when it holds a classifier (its model is mlp, lenet or cnn).
func LoadDetector(path string) (Detector, error) {
	ck, err := trainer.LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	switch ck.Spec.Kind {
	case model.MLP, model.LeNet, model.CNN:
		return nil, nil
	}
	d, err := trainer.LoadDetector(path)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// loadDetector is env.LoadDetector, or LoadDetector.
func (e Env) loadDetector(path string) (Detector, error) {
	if e.LoadDetector != nil {
		return e.LoadDetector(path)
	}
	return LoadDetector(path)
}

// boxOptions are predict's flags for detectors.
type boxOptions struct {
	conf     float64 // the lowest score shown
	asJSON   bool
	saveTxt  string // the folder for YOLO label files ("": none)
	saveConf bool   // their lines end with the score
}

// boxJSON is one box of a predict --json line.
type boxJSON struct {
	Class int        `json:"class"`
	Name  string     `json:"name"`
	Score float64    `json:"score"`
	Box   [4]float64 `json:"box"` // x1, y1, x2, y2 in the image's pixels
}

// boxesJSON is a predict --json line of a detector: the image and its
// boxes, highest score first.
type boxesJSON struct {
	Image string    `json:"image"`
	Boxes []boxJSON `json:"boxes"`
}

// imageErrorJSON is the line of an image that could not be read.
type imageErrorJSON struct {
	Image string `json:"image"`
	Error string `json:"error"`
}

// predictBoxes runs a detector on each image: a line each (text or
// JSON), and a YOLO label file each with --save-txt.
func predictBoxes(ctx context.Context, det Detector, images []string, o boxOptions, env Env) int {
	if o.saveTxt != "" {
		if err := os.MkdirAll(o.saveTxt, 0o755); err != nil {
			printErr(env.Stderr, "predict: --save-txt:", err)
			return ExitUsage
		}
	}
	classes := det.Classes()
	written := map[string]string{} // label file → the image it was written for
	code := ExitOK
	for _, path := range images {
		if ctx.Err() != nil {
			return ExitStopped
		}
		dets, size, err := detectFile(det, path, o.conf)
		if err == nil && o.saveTxt != "" {
			err = saveLabels(o.saveTxt, path, size, dets, o.saveConf, written)
		}
		if err != nil {
			printErr(env.Stderr, "predict:", err)
			code = max(code, exitFor(err))
		}
		switch {
		case o.asJSON:
			writeBoxesJSON(env.Stdout, path, dets, classes, err)
		case err == nil:
			fmt.Fprintln(env.Stdout, boxesText(path, dets, classes, o.conf))
		}
	}
	return code
}

// detectFile decodes an image and finds its objects scoring at least
// conf, highest score first, clipped to the image (boxes left empty are
// dropped); it also returns the image's size.
func detectFile(det Detector, path string, conf float64) ([]detect.Detection, image.Point, error) {
	img, err := data.DecodeImageFile(path)
	if err != nil {
		return nil, image.Point{}, err
	}
	all, err := det.Detect(img)
	if err != nil {
		return nil, image.Point{}, fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	var out []detect.Detection
	for _, d := range all {
		d.Box = clipBox(d.Box, float32(b.Dx()), float32(b.Dy()))
		if float64(d.Score) >= conf && d.Box.Area() > 0 {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, b.Size(), nil
}

// clipBox keeps a box within a w×h image (a coordinate that is not a
// number becomes 0), so that what is printed and saved is a box of the
// image: YOLO labels must lie within 0..1.
func clipBox(b detect.Box, w, h float32) detect.Box {
	clip := func(v, hi float32) float32 {
		if !(v > 0) {
			return 0
		}
		return min(v, hi)
	}
	return detect.Box{X1: clip(b.X1, w), Y1: clip(b.Y1, h), X2: clip(b.X2, w), Y2: clip(b.Y2, h)}
}

// className is class k's name, or its number when the model has none.
func className(classes []string, k int) string {
	if k >= 0 && k < len(classes) {
		return classes[k]
	}
	return strconv.Itoa(k)
}

// round is v to the given number of decimals.
func round(v float32, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(float64(v)*p) / p
}

// writeBoxesJSON writes an image's boxes (or the error that stopped it)
// as one JSON line: boxes to the hundredth of a pixel, scores to four
// decimals.
func writeBoxesJSON(w io.Writer, path string, dets []detect.Detection, classes []string, err error) {
	var line any = imageErrorJSON{Image: path, Error: fmt.Sprint(err)}
	if err == nil {
		boxes := make([]boxJSON, 0, len(dets))
		for _, d := range dets {
			boxes = append(boxes, boxJSON{Class: d.Class, Name: className(classes, d.Class), Score: round(d.Score, 4),
				Box: [4]float64{round(d.Box.X1, 2), round(d.Box.Y1, 2), round(d.Box.X2, 2), round(d.Box.Y2, 2)}})
		}
		line = boxesJSON{Image: path, Boxes: boxes}
	}
	b, _ := json.Marshal(line)
	fmt.Fprintf(w, "%s\n", b)
}

// boxesText is an image's boxes in one line of words.
func boxesText(path string, dets []detect.Detection, classes []string, conf float64) string {
	if len(dets) == 0 {
		return fmt.Sprintf("%s: no object scores %.2f or more", printable.String(path), conf)
	}
	parts := make([]string, len(dets))
	for i, d := range dets {
		parts[i] = fmt.Sprintf("%s %.2f at (%.0f, %.0f)-(%.0f, %.0f)", printable.String(className(classes, d.Class)), d.Score, d.Box.X1, d.Box.Y1, d.Box.X2, d.Box.Y2)
	}
	noun := "objects"
	if len(dets) == 1 {
		noun = "object"
	}
	return fmt.Sprintf("%s: %d %s: %s", printable.String(path), len(dets), noun, strings.Join(parts, "; "))
}

// saveLabels writes an image's boxes as a YOLO label file in dir, named
// after the image (photo.jpg → photo.txt): a line "class cx cy w h" per
// box, normalised by the image's size (as its training labels are), with
// the score at the end when withConf. An image without boxes gets an
// empty file (YOLO's background image). Two images of one name would
// write one file: the second is refused.
func saveLabels(dir, img string, size image.Point, dets []detect.Detection, withConf bool, written map[string]string) error {
	name := strings.TrimSuffix(filepath.Base(img), filepath.Ext(img)) + ".txt"
	out := filepath.Join(dir, name)
	if prev, ok := written[out]; ok {
		return fmt.Errorf("%w: %s: its labels would overwrite %s's (%s): predict images of one name separately, with another --save-txt folder", data.ErrData, img, prev, out)
	}
	written[out] = img
	var b strings.Builder
	w, h := float64(size.X), float64(size.Y)
	for _, d := range dets {
		x1, y1, x2, y2 := float64(d.Box.X1), float64(d.Box.Y1), float64(d.Box.X2), float64(d.Box.Y2)
		fmt.Fprintf(&b, "%d %.6f %.6f %.6f %.6f", d.Class, (x1+x2)/2/w, (y1+y2)/2/h, (x2-x1)/w, (y2-y1)/h)
		if withConf {
			fmt.Fprintf(&b, " %.4f", d.Score)
		}
		b.WriteByte('\n')
	}
	if err := atomicfile.Write(atomicfile.OS{}, out, []byte(b.String())); err != nil {
		return fmt.Errorf("%s: writing its labels: %w", img, err)
	}
	return nil
}
