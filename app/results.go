package app

import (
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// resultsView is the Results step: the metrics of the run in wz.result (a
// finished run's results.json, or a stopped run's best checkpoint,
// evaluated once), and what can be done with the run.
type resultsView struct {
	wz      *wizard
	summary *widget.Label
	table   *fyne.Container
	confuse *fyne.Container
	samples *fyne.Container
	folder  *widget.Label
	tryOut  *widget.Label
	tried   *fyne.Container // "Try an image": the image and what the model says
	// the headings of the table, the confusion matrix and the samples
	// (a detector's results have no confusion matrix)
	perClassHead, confuseHead, samplesHead *widget.Label
	resumeBtn                              *widget.Button
	moreBtn                                *widget.Button
	exportBtn                              *widget.Button
	deleteBtn                              *widget.Button
	info                                   *trainer.RunInfo // what the run folder says (nil until read)
	gen                                    int              // the enter generation: late answers of an older one are dropped
	body                                   *fyne.Container
	scroll                                 *container.Scroll
	content                                fyne.CanvasObject
}

// sampleCellSize is the room of a classifier's sample prediction.
var sampleCellSize = fyne.NewSize(176, 150)

func newResultsView(wz *wizard) *resultsView {
	v := &resultsView{wz: wz}
	v.summary = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.summary.Wrapping = fyne.TextWrapWord
	v.table = container.NewVBox()
	v.confuse = container.NewVBox()
	v.samples = container.NewGridWrap(sampleCellSize)
	v.folder = widget.NewLabel("")
	v.folder.Wrapping = fyne.TextWrapWord
	v.tryOut = widget.NewLabel("")
	v.tryOut.Wrapping = fyne.TextWrapWord
	v.tryOut.Hide()
	v.tried = container.NewHBox()
	v.tried.Hide()
	open := widget.NewButtonWithIcon("Open folder", theme.FolderOpenIcon(), func() {
		if wz.result != nil {
			wz.openFolder(wz.result.RunDir)
		}
	})
	try := widget.NewButtonWithIcon("Try an image…", theme.FileImageIcon(), v.tryImage)
	v.resumeBtn = widget.NewButtonWithIcon("Resume", theme.MediaPlayIcon(), func() { v.again(0) })
	var count fyne.CanvasObject
	v.moreBtn, count = wz.moreEpochs(v.again)
	v.exportBtn = widget.NewButtonWithIcon("Export…", theme.UploadIcon(), v.export)
	v.deleteBtn = widget.NewButtonWithIcon("Delete…", theme.DeleteIcon(), v.remove)
	runs := widget.NewButtonWithIcon("All runs", theme.ListIcon(), wz.showRuns)
	actions := container.NewHBox(v.resumeBtn, v.moreBtn, count,
		widget.NewSeparator(), try, open, v.exportBtn, v.deleteBtn, widget.NewSeparator(), runs)
	v.perClassHead, v.confuseHead, v.samplesHead = bold(""), bold(""), bold("")
	v.perClassHead.Wrapping, v.samplesHead.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord
	v.classifierHeads()
	v.body = container.NewVBox(v.summary, v.folder, actions, v.tryOut, v.tried,
		v.perClassHead, v.table, v.confuseHead, v.confuse, v.samplesHead, v.samples)
	// Both ways: a table wider than the window scrolls instead of
	// widening it.
	v.scroll = container.NewScroll(v.body)
	v.content = v.scroll
	return v
}

// enter shows wz.result. A run without metrics (stopped, or opened from
// the Runs view) is evaluated from its best checkpoint in the background.
func (v *resultsView) enter() {
	v.gen++
	gen := v.gen
	res := v.wz.result
	v.table.RemoveAll()
	v.confuse.RemoveAll()
	v.samples.RemoveAll()
	v.say("")
	v.showTried(nil, "", nil)
	v.folder.SetText("")
	v.classifierHeads()
	v.info = nil
	for _, b := range []*widget.Button{v.resumeBtn, v.moreBtn, v.exportBtn, v.deleteBtn} {
		b.Disable()
	}
	if res == nil {
		v.summary.SetText("No results yet: train a model first, or open a run from All runs.")
		v.relayout()
		return
	}
	v.folder.SetText("Run folder: " + res.RunDir)
	if res.Stopped != "" {
		v.resumeBtn.Enable()
	}
	v.wz.background(func() {
		info, err := trainer.ReadRun(res.RunDir)
		v.wz.ui(func() {
			if gen != v.gen || err != nil {
				return
			}
			v.info = &info
			v.showActions()
		})
	})
	if res.Test == nil && res.Val == nil && res.Detect == nil {
		v.summary.SetText(fmt.Sprintf("The run stopped after %s. Evaluating its best checkpoint on the validation images…", plural.Count(res.Epochs, "epoch")))
		v.relayout()
		v.wz.background(func() {
			full, err := v.wz.deps.RunResults(v.wz.ctx, res.RunDir)
			v.wz.ui(func() {
				if gen != v.gen {
					return
				}
				if err != nil {
					v.summary.SetText(fmt.Sprintf("The run stopped after %s, before its first checkpoint, so there is nothing to evaluate: resume it. (%v)", plural.Count(res.Epochs, "epoch"), err))
					v.relayout()
					return
				}
				if full.Stopped == "" {
					full.Stopped = res.Stopped
				}
				v.wz.result = full
				v.show(full)
			})
		})
		return
	}
	v.show(res)
}

// say shows a line under the actions (hidden when empty).
func (v *resultsView) say(text string) {
	v.tryOut.SetText(text)
	if text == "" {
		v.tryOut.Hide()
	} else {
		v.tryOut.Show()
	}
	relayout(v.body, v.scroll)
}

// relayout lays the page out again after its contents changed.
func (v *resultsView) relayout() { relayout(v.table, v.confuse, v.samples, v.body, v.scroll) }

// showActions enables what the run folder allows.
func (v *resultsView) showActions() {
	in := v.info
	if in.CanResume {
		v.resumeBtn.Enable()
	} else {
		v.resumeBtn.Disable()
	}
	if in.CanExtend {
		v.moreBtn.Enable()
	} else {
		v.moreBtn.Disable()
	}
	v.exportBtn.Enable()
	if in.State != trainer.RunRunning {
		v.deleteBtn.Enable()
	}
}

// classifierHeads titles the sections as a classifier's results have
// them.
func (v *resultsView) classifierHeads() {
	v.perClassHead.SetText("Per class (best model)")
	v.confuseHead.SetText("Confusion matrix (rows: true class, columns: predicted class, by the class's number in the table above)")
	v.confuseHead.Show()
	v.samplesHead.SetText("Sample predictions (✔ right, ✖ wrong)")
	v.samples.Layout = layout.NewGridWrapLayout(sampleCellSize)
}

// show fills the tables from a run's metrics.
func (v *resultsView) show(res *trainer.Result) {
	if res.Detect != nil {
		v.showDetect(res)
		return
	}
	m := res.Test
	split := "test"
	if m == nil {
		m, split = res.Val, "validation"
	}
	if m == nil {
		return
	}
	state := ""
	if res.Stopped != "" {
		state = " · " + res.Stopped
	}
	v.summary.SetText(fmt.Sprintf("Accuracy on the %s images: %.2f%% (top-5 %.2f%%, loss %.4f) · best epoch %d of %d · trained on %s%s",
		split, 100*m.Accuracy, 100*m.Top5, m.Loss, res.BestEpoch, res.Epochs, strings.ToUpper(res.Device), state))
	folder := "Run folder: " + res.RunDir + "  (args.yaml, results.csv, best.ckpt, last.ckpt, labels.txt)"
	if g := res.GPU; g != nil {
		folder += "\n" + g.Summary()
	}
	v.folder.SetText(folder)
	v.table.RemoveAll()
	v.confuse.RemoveAll()
	v.table.Add(container.NewHBox(classTable(m)))
	if n := len(m.Confusion); n > 0 {
		v.confuse.Add(container.NewHBox(confusionTable(m)))
	}
	v.relayout()
	v.showSamples(res)
}

// classLabel names class i of the metrics: its index, as the labels and
// labels.txt count (from 0), then its name; a class named by its own
// index (the digits 0 to 9) is just the name, so that digit 3 never reads
// as anything but 3.
func classLabel(m *trainer.Metrics, i int) string {
	n := strconv.Itoa(i)
	if i >= len(m.PerClass) || m.PerClass[i].Class == n {
		return n
	}
	return n + "  " + m.PerClass[i].Class
}

// classTable is the per-class table: the class name column as wide as
// its longest name, the numbers in narrow columns.
func classTable(m *trainer.Metrics) fyne.CanvasObject {
	names := container.NewVBox(bold("class"))
	cols := []*fyne.Container{container.NewVBox(bold("precision")), container.NewVBox(bold("recall")), container.NewVBox(bold("F1")), container.NewVBox(bold("images"))}
	for i, c := range m.PerClass {
		names.Add(widget.NewLabel(classLabel(m, i)))
		for k, s := range []string{fmt.Sprintf("%.3f", c.Precision), fmt.Sprintf("%.3f", c.Recall), fmt.Sprintf("%.3f", c.F1), strconv.Itoa(c.Support)} {
			cols[k].Add(widget.NewLabelWithStyle(s, fyne.TextAlignTrailing, fyne.TextStyle{}))
		}
	}
	row := container.NewHBox(names)
	for _, c := range cols {
		row.Add(c)
	}
	return row
}

// confusionTable shows the matrix with the classes by index across the
// top and by index and name down the side (classLabel), so that long
// names do not widen every column.
func confusionTable(m *trainer.Metrics) fyne.CanvasObject {
	n := len(m.Confusion)
	names := container.NewVBox(bold("true ╲ predicted"))
	for i := range n {
		names.Add(bold(classLabel(m, i)))
	}
	cells := container.NewGridWithColumns(n)
	for j := range n {
		cells.Add(widget.NewLabelWithStyle(strconv.Itoa(j), fyne.TextAlignCenter, fyne.TextStyle{Bold: true}))
	}
	for i, row := range m.Confusion {
		for j := range n {
			c := 0
			if j < len(row) {
				c = row[j]
			}
			l := widget.NewLabelWithStyle(strconv.Itoa(c), fyne.TextAlignCenter, fyne.TextStyle{})
			if i == j {
				l.Importance = widget.SuccessImportance
			} else if c > 0 {
				l.Importance = widget.DangerImportance
			}
			cells.Add(l)
		}
	}
	return container.NewHBox(names, cells)
}

func bold(s string) *widget.Label {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// Sample predictions: how many right and wrong ones are shown, how many
// validation images are looked at for them at most, and the seed of their
// order (fixed, so that the same run shows the same samples).
const (
	samplesEach = 8
	sampleScan  = 3000
	sampleSeed  = 1
)

// showSamples classifies validation images with the best model in the
// background and shows some right and some wrong, taken round-robin over
// the classes (sampleOrder), each with the true class when wrong (the
// label wraps at words).
func (v *resultsView) showSamples(res *trainer.Result) {
	ds := v.wz.dataset
	if ds == nil || (len(res.Classes) > 0 && !slices.Equal(ds.Classes, res.Classes)) { // another dataset's model
		return
	}
	gen := v.gen
	v.wz.background(func() {
		p, err := v.wz.deps.LoadModel(filepath.Join(res.RunDir, "best"))
		if err != nil {
			return
		}
		order := sampleOrder(ds.Val.Labels, len(ds.Classes), sampleSeed)
		right, wrong := pickSamples(order[:min(len(order), sampleScan)], samplesEach, func(i int) (string, bool) {
			preds, err := p.PredictImage(toImage(ds, ds.Val, i), "no")
			if err != nil || len(preds) == 0 {
				return "", false
			}
			return preds[0].Class, true
		}, func(i int) string { return ds.Classes[ds.Val.Labels[i]] })
		var cells []fyne.CanvasObject
		for _, s := range append(right, wrong...) {
			cells = append(cells, sampleCell(toImage(ds, ds.Val, s.index), s.pred, ds.Classes[ds.Val.Labels[s.index]]))
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

// sampleOrder orders the images of labels (class indices below classes)
// round-robin over the classes: one image of each class in turn, each
// class's images shuffled with seed, so that samples come from every class
// and not from the first ones a sorted split starts with.
func sampleOrder(labels []int32, classes int, seed uint64) []int {
	byClass := make([][]int, classes)
	n := 0
	for i, y := range labels {
		if y >= 0 && int(y) < classes {
			byClass[y] = append(byClass[y], i)
			n++
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for _, idx := range byClass {
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	}
	out := make([]int, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, idx := range byClass {
			if k < len(idx) {
				out = append(out, idx[k])
			}
		}
	}
	return out
}

// sample is one classified image: its index and the class predicted.
type sample struct {
	index int
	pred  string
}

// pickSamples goes through order and keeps the first n right and the
// first n wrong predictions; predict classifies image i (false: it could
// not), truth names its class.
func pickSamples(order []int, n int, predict func(i int) (string, bool), truth func(i int) string) (right, wrong []sample) {
	for _, i := range order {
		if len(right) >= n && len(wrong) >= n {
			break
		}
		pred, ok := predict(i)
		if !ok {
			continue
		}
		if pred == truth(i) {
			if len(right) < n {
				right = append(right, sample{i, pred})
			}
		} else if len(wrong) < n {
			wrong = append(wrong, sample{i, pred})
		}
	}
	return right, wrong
}

// sampleCell is one classified image: "✔ class", or "✖ predicted (is
// true)", wrapped at words so that the true class shows.
func sampleCell(img image.Image, pred, truth string) fyne.CanvasObject {
	ci := canvas.NewImageFromImage(img)
	ci.FillMode, ci.ScaleMode = canvas.ImageFillContain, canvas.ImageScalePixels
	ci.SetMinSize(fyne.NewSize(64, 64))
	mark := "✔ " + pred
	if pred != truth {
		mark = fmt.Sprintf("✖ %s (is %s)", pred, truth)
	}
	l := widget.NewLabel(mark)
	l.Wrapping = fyne.TextWrapWord
	l.SizeName = theme.SizeNameCaptionText
	return container.NewBorder(ci, nil, nil, nil, l)
}

// tryImage classifies an image the user picks with the run's best model
// and shows the image with the prediction and the top classes.
func (v *resultsView) tryImage() {
	res := v.wz.result
	if res == nil || v.wz.deps.PickFile == nil {
		return
	}
	v.wz.deps.PickFile(v.wz.win, func(path string) {
		if path == "" {
			return
		}
		v.showTried(nil, "", nil)
		gen := v.gen
		if res.Detect != nil {
			v.say("Looking for objects in " + path + "…")
			v.tryBoxes(res, path, gen)
			return
		}
		v.say("Classifying " + path + "…")
		v.wz.background(func() {
			img, err := data.DecodeImageFile(path)
			var preds []trainer.Prediction
			if err == nil {
				var p Classifier
				if p, err = v.wz.deps.LoadModel(filepath.Join(res.RunDir, "best")); err == nil {
					preds, err = p.PredictImage(img, "auto")
				}
			}
			v.wz.ui(func() {
				if gen != v.gen {
					return
				}
				if err != nil {
					v.say("Could not classify " + path + ": " + err.Error())
					return
				}
				v.say("")
				v.showTried(img, path, preds)
			})
		})
	})
}

// tryBoxes runs the detector on the image at path in the background and
// shows the image with its boxes and a line for each.
func (v *resultsView) tryBoxes(res *trainer.Result, path string, gen int) {
	v.wz.background(func() {
		img, err := data.DecodeImageFile(path)
		var pic image.Image
		var lines []string
		if err == nil {
			pic, lines, err = v.tryDetect(res, path, img)
		}
		v.wz.ui(func() {
			if gen != v.gen {
				return
			}
			if err != nil {
				v.say("Could not look for objects in " + path + ": " + err.Error())
				return
			}
			v.say("")
			v.showTriedBoxes(pic, lines)
		})
	})
}

// showTriedBoxes shows an image with a detector's boxes drawn on it and
// the lines that list them.
func (v *resultsView) showTriedBoxes(pic image.Image, lines []string) {
	v.tried.RemoveAll()
	ci := canvas.NewImageFromImage(pic)
	ci.FillMode, ci.ScaleMode = canvas.ImageFillContain, canvas.ImageScaleSmooth
	ci.SetMinSize(fyne.NewSquareSize(320))
	text := container.NewVBox()
	for i, l := range lines {
		if i == 0 {
			text.Add(bold(l))
			continue
		}
		text.Add(widget.NewLabel(l))
	}
	v.tried.Add(ci)
	v.tried.Add(text)
	v.tried.Show()
	relayout(v.tried, v.body, v.scroll)
}

// showTried shows the image tried and what the model says of it: the
// prediction and the top classes (img nil: nothing).
func (v *resultsView) showTried(img image.Image, path string, preds []trainer.Prediction) {
	v.tried.RemoveAll()
	if img == nil {
		v.tried.Hide()
		relayout(v.body, v.scroll)
		return
	}
	pic := canvas.NewImageFromImage(img)
	pic.FillMode = canvas.ImageFillContain // scaled to the box, its aspect kept
	pic.ScaleMode = canvas.ImageScaleSmooth
	if b := img.Bounds(); b.Dx() <= 64 && b.Dy() <= 64 {
		pic.ScaleMode = canvas.ImageScalePixels // a small image's pixels stay sharp
	}
	pic.SetMinSize(fyne.NewSquareSize(160))
	lines := container.NewVBox(widget.NewLabel(filepath.Base(path)))
	if len(preds) > 0 {
		lines.Add(bold(fmt.Sprintf("Prediction: %s (%.1f%%)", preds[0].Class, 100*preds[0].Prob)))
	}
	for i := 1; i < len(preds) && i < 5; i++ {
		lines.Add(widget.NewLabel(fmt.Sprintf("then %s (%.1f%%)", preds[i].Class, 100*preds[i].Prob)))
	}
	v.tried.Add(pic)
	v.tried.Add(lines)
	v.tried.Show()
	relayout(v.tried, v.body, v.scroll)
}

// again resumes the run (extra 0) or extends it by extra epochs.
func (v *resultsView) again(extra int) {
	res := v.wz.result
	if res == nil {
		return
	}
	v.wz.resume = trainer.Options{Resume: res.RunDir, Extend: extra}
	v.wz.show(3)
	v.wz.train.begin()
}

// export copies the model, labels, settings and results into a new folder
// the user names in a save dialog. trainer.ExportRun copies into a
// temporary folder and renames it at the end: never a partial folder.
func (v *resultsView) export() {
	res := v.wz.result
	if res == nil {
		return
	}
	v.wz.exportRun(res.RunDir, v.say)
}

// remove deletes the run after asking.
func (v *resultsView) remove() {
	res := v.wz.result
	if res == nil {
		return
	}
	v.wz.deleteRun(res.RunDir, func() {
		v.wz.result = nil
		v.wz.showRuns()
	})
}

// exportRun asks how and where to export run dir and exports it in the
// background; say shows the outcome.
func (wz *wizard) exportRun(dir string, say func(string)) {
	if wz.deps.ExportTo == nil {
		return
	}
	wz.deps.ExportTo(wz.win, filepath.Base(dir), func(dest, format string) {
		if dest == "" {
			return
		}
		say("Exporting to " + dest + "…")
		wz.background(func() {
			var err error
			done := "Exported to " + dest + " (use it with: gpuwizard predict --model " + filepath.Join(dest, "best.ckpt") + " IMAGE)"
			if format == trainer.ExportONNXFormat {
				err = trainer.ExportONNX(dir, dest)
				done = "Exported the model to " + dest + ": an ONNX file (input: the image resized, pixels scaled to 0–1; output: the probability of each class; the class names are in its metadata)"
			} else {
				err = trainer.ExportRun(wz.ctx, dir, dest)
			}
			wz.ui(func() {
				if err != nil {
					say("Export failed (nothing was left behind): " + err.Error())
					return
				}
				say(done)
			})
		})
	})
}

// deleteRun asks, then deletes run dir and calls then.
func (wz *wizard) deleteRun(dir string, then func()) {
	if wz.deps.Confirm == nil {
		return
	}
	wz.deps.Confirm(wz.win, "Delete this run?", "Delete "+dir+" with its checkpoints and results? This cannot be undone.", "Delete", func(ok bool) {
		if !ok {
			return
		}
		if err := trainer.DeleteRun(dir); err != nil {
			msg := "Delete: " + err.Error()
			if errors.Is(err, trainer.ErrRunInUse) {
				msg = "This run is training right now: stop it first."
			}
			wz.fail(msg)
			return
		}
		then()
	})
}

// openFolder opens dir in the file manager; when that fails (no
// xdg-open, no file manager) it shows the path with a copy button.
func (wz *wizard) openFolder(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	open := wz.deps.OpenFolder
	if open == nil {
		open = func(string) error { return errors.New("no way to open folders here") }
	}
	wz.background(func() {
		err := open(abs)
		if err == nil {
			return
		}
		wz.ui(func() { wz.showPath("The folder could not be opened", abs, err) })
	})
}

// showPath says why a folder could not be opened and offers its path.
func (wz *wizard) showPath(title, path string, err error) {
	msg := widget.NewLabel(fmt.Sprintf("%v.\nOpen it yourself; its path:", err))
	msg.Wrapping = fyne.TextWrapWord
	p := widget.NewLabelWithStyle(path, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	p.Wrapping = fyne.TextWrapWord
	copied := widget.NewLabel("")
	cp := widget.NewButtonWithIcon("Copy path", theme.ContentCopyIcon(), nil)
	cp.OnTapped = func() {
		wz.app.Clipboard().SetContent(path)
		copied.SetText("Copied.")
	}
	wz.lastPathDialog = path
	box := container.NewVBox(msg, p, container.NewHBox(cp, copied))
	d := dialog.NewCustom(title, "Close", container.NewGridWrap(fyne.NewSize(520, box.MinSize().Height), box), wz.win)
	d.Show()
}

// removeEmptyFile removes path when it is an empty regular file (the one
// a save dialog just created), so that a folder can take its name.
func removeEmptyFile(path string) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
}
