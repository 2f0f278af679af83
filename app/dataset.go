package app

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
)

// datasetView is the Dataset step: the built-in dataset preselected, or a
// folder or file the user picks, with its lint report and sample images.
type datasetView struct {
	wz       *wizard
	path     *widget.Label
	format   *widget.Label
	lint     *widget.Label
	samples  *fyne.Container
	progress *widget.ProgressBarInfinite
	loading  bool
	gen      int // the load on screen: an older load's late answer is dropped
	err      error
	detected string
	typed    *widget.Entry
	body     *fyne.Container
	top      *fyne.Container
	scroll   *container.Scroll
	content  fyne.CanvasObject
}

func newDatasetView(wz *wizard) *datasetView {
	v := &datasetView{wz: wz}
	v.path = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.path.Wrapping = fyne.TextWrapWord
	v.format = widget.NewLabel("")
	v.format.Wrapping = fyne.TextWrapWord
	v.lint = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.lint.Wrapping = fyne.TextWrapWord // at spaces: never inside a path or a number
	v.progress = widget.NewProgressBarInfinite()
	v.progress.Hide()
	v.samples = container.NewGridWrap(fyne.NewSize(124, 132))
	folder := widget.NewButtonWithIcon("Choose folder…", theme.FolderOpenIcon(), func() {
		if wz.deps.PickFolder != nil {
			wz.deps.PickFolder(wz.win, func(p string) {
				if p != "" {
					v.load(p)
				}
			})
		}
	})
	file := widget.NewButtonWithIcon("Choose file…", theme.FileIcon(), func() {
		if wz.deps.PickFile != nil {
			wz.deps.PickFile(wz.win, func(p string) {
				if p != "" {
					v.load(p)
				}
			})
		}
	})
	builtin := widget.NewButtonWithIcon("Use the built-in dataset", theme.HomeIcon(), func() { v.load(data.Builtin) })
	builtinDet := widget.NewButtonWithIcon("Built-in detection set", theme.ViewFullScreenIcon(), func() { v.load(detect.Builtin) })
	// A path typed or pasted (Enter loads it): quicker than a dialog when
	// the path is known, and the way in where the dialog cannot reach.
	v.typed = widget.NewEntry()
	v.typed.SetPlaceHolder("or type a folder or file path and press Enter")
	v.typed.OnSubmitted = func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			v.load(expandHome(p))
		}
	}
	help := widget.NewLabel("Your images: one folder per class (cats/, dogs/ …), optionally inside train/ and val/ folders; or MNIST IDX files, CIFAR-10 batches: a classifier learns them. A YOLO data.yaml (or its folder): a detector learns to draw boxes. A COCO .json is checked here; to train on it, export it as YOLO.")
	help.Wrapping = fyne.TextWrapWord
	help.Importance = widget.LowImportance
	top := container.NewVBox(
		widget.NewLabelWithStyle("Which images should the model learn?", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, container.NewHBox(builtin, builtinDet, folder, file), nil, v.typed), help, v.path, v.format, v.progress)
	v.body = container.NewVBox(v.lint, widget.NewLabelWithStyle("Samples", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.samples)
	v.scroll = container.NewVScroll(v.body)
	v.top = top
	v.content = container.NewBorder(top, nil, nil, nil, v.scroll)
	return v
}

func (v *datasetView) enter() {
	if v.wz.dataset == nil && v.wz.detSet == nil && !v.loading && v.err == nil {
		v.load(v.wz.dataArg)
	}
}

func (v *datasetView) leave() error {
	switch {
	case v.loading:
		return errors.New("the dataset is still loading: wait a moment")
	case v.detected == "coco":
		return errors.New("this is a COCO file: it is checked above, but gpuwizard trains detectors on YOLO sets; export it as YOLO (a data.yaml with images/ and labels/) and choose that")
	case v.err != nil:
		return fmt.Errorf("this dataset cannot be used: %w", v.err)
	case v.wz.dataset == nil && v.wz.detSet == nil:
		return errors.New("choose a dataset first")
	}
	return nil
}

// load reads a dataset in the background and shows its report. What was
// said about the dataset chosen before (its report, and the reason Next
// refused it) goes at once: every message on the step is about this one.
func (v *datasetView) load(path string) {
	wz := v.wz
	v.gen++
	gen := v.gen
	v.loading, v.err, v.detected = true, nil, ""
	if wz.cur == 1 && !wz.inRuns {
		wz.status.SetText("")
	}
	v.path.SetText(pathLabel(path))
	v.format.SetText("Reading…")
	v.lint.SetText("")
	v.samples.RemoveAll()
	v.progress.Show()
	v.progress.Start()
	cfg := wz.cfg
	wz.background(func() {
		l := v.read(path, cfg)
		v.wz.ui(func() {
			if gen == v.gen {
				v.loaded(path, l)
			}
		})
	})
}

// datasetLoad is what reading a dataset gave: its format, the dataset
// (a classifier's or a detector's), its lint and the error that stops it.
type datasetLoad struct {
	format string
	ds     *data.Dataset
	det    *detect.Dataset
	lint   *data.Lint
	err    error
}

// read detects path's format and loads it (off the UI goroutine): a
// detection set at the canvas the settings ask for, a COCO file linted
// only, anything else for a classifier.
func (v *datasetView) read(path string, cfg trainer.Config) datasetLoad {
	var l datasetLoad
	if path == detect.Builtin {
		l.format = detect.Builtin
	} else if l.format, l.err = data.Detect(path); l.err != nil {
		return l
	}
	switch {
	case l.format == "yolo" || l.format == detect.Builtin:
		l.det, l.err = v.wz.loadDetect(path, detectSize(cfg.ImageSize), cfg.Seed)
		if l.det != nil {
			l.lint = l.det.Lint
		}
	case l.format == "coco":
		l.lint, l.err = data.LintDetection(path)
	case v.wz.deps.LoadData != nil:
		l.ds, l.err = v.wz.deps.LoadData(path, cfg.DataOptions())
		if l.ds != nil {
			l.lint = l.ds.Lint
		}
	}
	return l
}

func (v *datasetView) loaded(path string, l datasetLoad) {
	format, ds, lint, err := l.format, l.ds, l.lint, l.err
	v.loading = false
	if v.wz.cur == 1 && !v.wz.inRuns {
		v.wz.status.SetText("") // "still loading" is over; Next says what it thinks of this one
	}
	v.progress.Stop()
	v.progress.Hide()
	v.detected, v.err = format, err
	switch {
	case err == nil && ds != nil:
		v.wz.dataset, v.wz.detSet, v.wz.dataArg = ds, nil, path
	case err == nil && l.det != nil:
		v.wz.dataset, v.wz.detSet, v.wz.dataArg = nil, l.det, path
	case err != nil || format == "coco":
		v.wz.dataset, v.wz.detSet = nil, nil
	}
	switch {
	case l.det != nil:
		v.format.SetText(detectFormat(l.det))
	case ds != nil:
		s := fmt.Sprintf("Format: %s · %s · %d×%d, %s · %d training, %d validation", ds.Format, plural.Count(len(ds.Classes), "class"), ds.Width, ds.Height, plural.Count(ds.Channels, "channel"), ds.Train.Len(), ds.Val.Len())
		if ds.Test != nil {
			s += fmt.Sprintf(", %d test", ds.Test.Len())
		}
		s += " images"
		if ds.Credit != "" {
			s += "\n" + ds.Credit
		}
		v.format.SetText(s)
	case format != "":
		v.format.SetText("Format: " + format)
	default:
		v.format.SetText("")
	}
	text := ""
	if lint != nil {
		text = lint.Summary()
	}
	if err != nil {
		text += "\n✖ " + err.Error()
	}
	v.lint.SetText(strings.TrimSpace(text))
	v.samples.RemoveAll()
	switch {
	case ds != nil:
		v.samples.Layout = layout.NewGridWrapLayout(fyne.NewSize(124, 132))
		for _, o := range sampleGrid(ds, 24) {
			v.samples.Add(o)
		}
	case l.det != nil && err == nil:
		v.samples.Layout = layout.NewGridWrapLayout(fyne.NewSize(datasetCell+8, datasetCell+40))
		for _, o := range detectSampleGrid(l.det, 12) {
			v.samples.Add(o)
		}
	}
	relayout(v.top, v.body, v.scroll, v.content)
}

// relayout lays containers out again after their contents changed size
// (wrapped text that got longer, rows added), innermost first.
func relayout(objs ...fyne.CanvasObject) {
	for _, o := range objs {
		if o != nil {
			o.Refresh()
		}
	}
}

// expandHome turns a leading ~ into the home folder.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

func pathLabel(p string) string {
	switch p {
	case data.Builtin:
		return "Built-in dataset: handwritten digits (an MNIST subset), ready to train"
	case detect.Builtin:
		return "Built-in detection set: digits to find on cluttered canvases, each with its box, ready to train a detector"
	}
	return p
}

// sampleGrid shows up to n training images, round-robin over the classes.
func sampleGrid(ds *data.Dataset, n int) []fyne.CanvasObject {
	byClass := make([][]int, len(ds.Classes))
	for i, y := range ds.Train.Labels {
		if len(byClass[y]) < n {
			byClass[y] = append(byClass[y], i)
		}
	}
	var out []fyne.CanvasObject
	for k := 0; len(out) < n; k++ {
		added := false
		for c := range byClass {
			if k < len(byClass[c]) && len(out) < n {
				img := canvas.NewImageFromImage(toImage(ds, ds.Train, byClass[c][k]))
				img.FillMode = canvas.ImageFillContain
				img.ScaleMode = canvas.ImageScalePixels
				img.SetMinSize(fyne.NewSize(72, 72))
				// Long class names wrap at words over two lines.
				lbl := widget.NewLabelWithStyle(ds.Classes[c], fyne.TextAlignCenter, fyne.TextStyle{})
				lbl.Wrapping = fyne.TextWrapWord
				lbl.SizeName = theme.SizeNameCaptionText
				out = append(out, container.NewBorder(img, nil, nil, nil, lbl))
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// toImage turns a stored (planar) image back into an image.Image.
func toImage(ds *data.Dataset, s *data.Split, i int) image.Image {
	size := ds.ImageSize()
	px := s.Pixels[i*size : (i+1)*size]
	plane := ds.Width * ds.Height
	if ds.Channels == 1 {
		g := image.NewGray(image.Rect(0, 0, ds.Width, ds.Height))
		copy(g.Pix, px)
		return g
	}
	img := image.NewRGBA(image.Rect(0, 0, ds.Width, ds.Height))
	for k := 0; k < plane; k++ {
		img.Set(k%ds.Width, k/ds.Width, color.RGBA{px[k], px[plane+k], px[2*plane+k], 255})
	}
	return img
}
