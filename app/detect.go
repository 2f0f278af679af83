package app

import (
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/cli"
	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
	"gpuwizard/trainer/detect"
)

// This file is the wizard's side of object detection: a YOLO data.yaml
// or the built-in detection set on the Dataset step (its images with
// their boxes), and a detector's results (mAP, the per-class AP table,
// validation images with predicted and true boxes, Try an image).

// detectorModels are the detectors Settings offers.
var detectorModels = []string{"det-n", "det-s"}

// loadDetect is deps.LoadDetect, or detect.Load.
func (wz *wizard) loadDetect(path string, size int, seed int64) (*detect.Dataset, error) {
	if wz.deps.LoadDetect != nil {
		return wz.deps.LoadDetect(path, size, seed)
	}
	return detect.Load(path, size, seed)
}

// loadDetector is deps.LoadDetector, or the trainer's.
func (wz *wizard) loadDetector(path string) (cli.Detector, error) {
	if wz.deps.LoadDetector != nil {
		return wz.deps.LoadDetector(path)
	}
	d, err := trainer.LoadDetector(path)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// isDetection says whether the wizard works on a detection dataset.
func (wz *wizard) isDetection() bool { return wz.detSet != nil }

// detectSize is the canvas a detection set is loaded at for the window:
// the settings' image size when a detector can take it, else the set's
// default (0).
func detectSize(imageSize int) int {
	if imageSize != 0 && detect.CheckSize(imageSize) == nil {
		return imageSize
	}
	return 0
}

// checkDetectSize is Settings' rule for a detector's image size: 0 (the
// set's default) or a multiple of 32 from 128 to 640.
func checkDetectSize(n int) error {
	if n == 0 || (n >= detect.MinOfferedSize && detect.CheckSize(n) == nil) {
		return nil
	}
	return fmt.Errorf("image size: 0 (320; the built-in set 128), or a multiple of %d from %d to %d pixels", detect.SizeStep, detect.MinOfferedSize, detect.MaxSize)
}

// detectFormat describes a loaded detection set in one line or two.
func detectFormat(ds *detect.Dataset) string {
	boxes := 0
	for _, s := range []*detect.Split{ds.Train, ds.Val} {
		for _, im := range s.Images {
			boxes += len(im.Objects)
		}
	}
	colour := "colour"
	if ds.Channels == 1 {
		colour = "grey"
	}
	s := fmt.Sprintf("Format: %s detection · %s · letterboxed to %d×%d, %s · %d training, %d validation images · %s",
		strings.ToUpper(ds.Format), plural.Count(len(ds.Classes), "class"), ds.Size, ds.Size, colour, ds.Train.Len(), ds.Val.Len(), plural.Count(boxes, "box"))
	if ds.Format == detect.Builtin {
		s += "\nBuilt-in detection set: handwritten digits (the MNIST subset) on cluttered canvases, generated from the seed"
	}
	return s
}

// Sides of the images with boxes, in pixels: drawn at the size they are
// shown, their labels stay readable.
const (
	datasetCell = 128 // the Dataset step's samples
	resultsCell = 160 // the Results step's validation images
	triedSide   = 480 // Try an image
)

// detectSampleGrid shows up to n training images of a detection set
// with their boxes, spread over the split.
func detectSampleGrid(ds *detect.Dataset, n int) []fyne.CanvasObject {
	s := ds.Train
	n = min(n, s.Len())
	var out []fyne.CanvasObject
	for k := 0; k < n; k++ {
		i := k * s.Len() / n
		im := s.Images[i]
		pic := drawBoxes(detect.CanvasImage(s, i, ds.Size, ds.Channels), datasetCell, truthBoxes(im.Objects, ds.Classes, true))
		out = append(out, boxCell(pic, objectsCaption(im.Objects, ds.Classes), datasetCell))
	}
	return out
}

// objectsCaption names the classes of an image's objects, most frequent
// first: "2 × 7, 1 × 3".
func objectsCaption(objs []detect.Object, classes []string) string {
	if len(objs) == 0 {
		return "no objects"
	}
	counts := map[int]int{}
	var order []int
	for _, o := range objs {
		if counts[o.Class] == 0 {
			order = append(order, o.Class)
		}
		counts[o.Class]++
	}
	slices.SortStableFunc(order, func(a, b int) int { return counts[b] - counts[a] })
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%d × %s", counts[c], nameOf(classes, c))
	}
	return strings.Join(parts, ", ")
}

// boxCell is an image with boxes and a caption that wraps at words.
func boxCell(img image.Image, caption string, side float32) fyne.CanvasObject {
	ci := canvas.NewImageFromImage(img)
	ci.FillMode, ci.ScaleMode = canvas.ImageFillContain, canvas.ImageScaleSmooth
	ci.SetMinSize(fyne.NewSquareSize(side))
	l := widget.NewLabel(caption)
	l.Wrapping = fyne.TextWrapWord
	l.SizeName = theme.SizeNameCaptionText
	return container.NewBorder(ci, nil, nil, nil, l)
}

// apTable is a detector's per-class table: objects, AP50, AP50-95,
// precision and recall, and the mean over the classes last.
func apTable(m *detect.Metrics) fyne.CanvasObject {
	names := container.NewVBox(bold("class"))
	heads := []string{"objects", "AP50", "AP50-95", "precision", "recall"}
	cols := make([]*fyne.Container, len(heads))
	for k, h := range heads {
		cols[k] = container.NewVBox(bold(h))
	}
	row := func(name string, objects int, vals ...float64) {
		names.Add(widget.NewLabel(name))
		cols[0].Add(widget.NewLabelWithStyle(strconv.Itoa(objects), fyne.TextAlignTrailing, fyne.TextStyle{}))
		for k, v := range vals {
			cols[k+1].Add(widget.NewLabelWithStyle(fmt.Sprintf("%.3f", v), fyne.TextAlignTrailing, fyne.TextStyle{}))
		}
	}
	for _, c := range m.PerClass {
		row(c.Class, c.Objects, c.AP50, c.AP5095, c.Precision, c.Recall)
	}
	row("all (mean)", m.Objects, m.MAP50, m.MAP5095, m.Precision, m.Recall)
	out := container.NewHBox(names)
	for _, c := range cols {
		out.Add(c)
	}
	return out
}

// detectSummary is a detector's results in a sentence.
func detectSummary(res *trainer.Result) string {
	m := res.Detect
	state := ""
	if res.Stopped != "" {
		state = " · " + res.Stopped
	}
	return fmt.Sprintf("mAP50-95 %.3f, mAP50 %.3f on the %s (%s) · precision %.3f, recall %.3f at scores of %.2f or more · best epoch %d of %d · trained on %s%s",
		m.MAP5095, m.MAP50, plural.Count(m.Images, "validation image"), plural.Count(m.Objects, "object"), m.Precision, m.Recall, m.Threshold,
		res.BestEpoch, res.Epochs, strings.ToUpper(res.Device), state)
}

// showDetect fills the Results step from a detector's metrics.
func (v *resultsView) showDetect(res *trainer.Result) {
	v.summary.SetText(detectSummary(res))
	folder := "Run folder: " + res.RunDir + "  (args.yaml, results.csv with metrics/mAP50 and metrics/mAP50-95, best.ckpt, last.ckpt, labels.txt)"
	if g := res.GPU; g != nil {
		folder += "\n" + g.Summary()
	}
	v.folder.SetText(folder)
	v.perClassHead.SetText("Per class (best model, validation images; precision and recall at the best-F1 score threshold)")
	v.confuseHead.Hide()
	v.samplesHead.SetText("Validation images: predicted boxes in colour with their scores, true boxes dashed white")
	v.table.RemoveAll()
	v.confuse.RemoveAll()
	v.samples.Layout = layout.NewGridWrapLayout(fyne.NewSize(resultsCell+8, resultsCell+48))
	v.table.Add(container.NewHBox(apTable(res.Detect)))
	v.relayout()
	v.showDetectSamples(res)
}

// detectSamplesShown is how many validation images Results shows.
const detectSamplesShown = 8

// detectThreshold is the lowest score of a box drawn on an image (as
// gpuwizard predict's --conf).
const detectThreshold = 0.25

// showDetectSamples runs the best model on validation images in the
// background and shows them with predicted and true boxes.
func (v *resultsView) showDetectSamples(res *trainer.Result) {
	ds := v.wz.detSet
	if ds == nil || ds.Val.Len() == 0 || (len(res.Classes) > 0 && !slices.Equal(ds.Classes, res.Classes)) {
		return // another dataset's model, or none loaded
	}
	gen := v.gen
	v.wz.background(func() {
		det, err := v.wz.loadDetector(filepath.Join(res.RunDir, "best"))
		if err != nil {
			v.wz.ui(func() {
				if gen == v.gen {
					v.say("The validation images cannot be shown: " + err.Error())
				}
			})
			return
		}
		var cells []fyne.CanvasObject
		for k := 0; k < min(detectSamplesShown, ds.Val.Len()); k++ {
			i := k * ds.Val.Len() / min(detectSamplesShown, ds.Val.Len())
			cells = append(cells, detectSample(det, ds, i))
		}
		v.wz.ui(func() {
			if gen != v.gen {
				return
			}
			for _, o := range cells {
				v.samples.Add(o)
			}
			v.relayout()
		})
	})
}

// detectSample is validation image i with the detector's boxes (scoring
// detectThreshold or more) and the true ones, and a caption counting
// what was found.
func detectSample(det cli.Detector, ds *detect.Dataset, i int) fyne.CanvasObject {
	img := detect.CanvasImage(ds.Val, i, ds.Size, ds.Channels)
	im := ds.Val.Images[i]
	found, err := det.Detect(img)
	if err != nil {
		return boxCell(img, "not run: "+err.Error(), resultsCell)
	}
	dets := aboveThreshold(found, detectThreshold)
	boxes := append(truthBoxes(im.Objects, ds.Classes, false), predictedBoxes(dets, ds.Classes)...)
	pic := drawBoxes(img, resultsCell, boxes)
	return boxCell(pic, matchCaption(dets, im.Objects), resultsCell)
}

// aboveThreshold keeps the detections scoring at least conf.
func aboveThreshold(dets []detect.Detection, conf float32) []detect.Detection {
	var out []detect.Detection
	for _, d := range dets {
		if d.Score >= conf {
			out = append(out, d)
		}
	}
	return out
}

// matchCaption says how many true objects were found (a box of their
// class with an IoU of 0.5 or more) and how many boxes found nothing.
func matchCaption(dets []detect.Detection, truth []detect.Object) string {
	taken := make([]bool, len(truth))
	wrong := 0
	for _, d := range dets {
		hit := false
		for k, o := range truth {
			if !taken[k] && o.Class == d.Class && detect.IoU(o.Box, d.Box) >= 0.5 {
				taken[k], hit = true, true
				break
			}
		}
		if !hit {
			wrong++
		}
	}
	found := 0
	for _, t := range taken {
		if t {
			found++
		}
	}
	mark := "✔"
	if found < len(truth) || wrong > 0 {
		mark = "✖"
	}
	return fmt.Sprintf("%s found %d of %d · %d wrong", mark, found, len(truth), wrong)
}

// tryDetect finds the objects in an image the user picked with the
// run's best model and shows the image with its boxes.
func (v *resultsView) tryDetect(res *trainer.Result, path string, img image.Image) (image.Image, []string, error) {
	det, err := v.wz.loadDetector(filepath.Join(res.RunDir, "best"))
	if err != nil {
		return nil, nil, err
	}
	found, err := det.Detect(img)
	if err != nil {
		return nil, nil, err
	}
	dets := aboveThreshold(found, detectThreshold)
	slices.SortStableFunc(dets, func(a, b detect.Detection) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	b := img.Bounds()
	lines := []string{fmt.Sprintf("%s: %s scoring %.2f or more", filepath.Base(path), plural.Count(len(dets), "object"), float64(detectThreshold))}
	for k, d := range dets {
		if k == 8 {
			lines = append(lines, fmt.Sprintf("and %d more", len(dets)-k))
			break
		}
		lines = append(lines, fmt.Sprintf("%s %.2f at (%.0f, %.0f)-(%.0f, %.0f)", nameOf(det.Classes(), d.Class), d.Score, d.Box.X1, d.Box.Y1, d.Box.X2, d.Box.Y2))
	}
	shifted := make([]detect.Detection, len(dets))
	for k, d := range dets { // boxes in the image's pixels, from its corner
		d.Box = detect.Box{X1: d.Box.X1 - float32(b.Min.X), Y1: d.Box.Y1 - float32(b.Min.Y), X2: d.Box.X2 - float32(b.Min.X), Y2: d.Box.Y2 - float32(b.Min.Y)}
		shifted[k] = d
	}
	return drawBoxes(img, triedSide, predictedBoxes(shifted, det.Classes())), lines, nil
}
