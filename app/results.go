package app

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/trainer"
)

// resultsView is the Results step.
type resultsView struct {
	wz        *wizard
	summary   *widget.Label
	table     *fyne.Container
	confuse   *fyne.Container
	samples   *fyne.Container
	folder    *widget.Label
	tryOut    *widget.Label
	more      *widget.Entry
	resumeBtn *widget.Button
	content   fyne.CanvasObject
}

func newResultsView(wz *wizard) *resultsView {
	v := &resultsView{wz: wz}
	v.summary = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.summary.Wrapping = fyne.TextWrapWord
	v.table = container.NewVBox()
	v.confuse = container.NewVBox()
	v.samples = container.NewGridWrap(fyne.NewSize(84, 104))
	v.folder = widget.NewLabel("")
	v.folder.Wrapping = fyne.TextWrapBreak
	v.tryOut = widget.NewLabel("")
	v.tryOut.Wrapping = fyne.TextWrapWord
	v.more = widget.NewEntry()
	v.more.SetText("5")
	v.more.Validator = intValidator("epochs", 1, 10000)
	open := widget.NewButtonWithIcon("Open folder", theme.FolderOpenIcon(), func() {
		if wz.result != nil {
			abs, _ := filepath.Abs(wz.result.RunDir)
			wz.app.OpenURL(&url.URL{Scheme: "file", Path: abs})
		}
	})
	try := widget.NewButtonWithIcon("Try an image…", theme.FileImageIcon(), v.tryImage)
	v.resumeBtn = widget.NewButtonWithIcon("Resume", theme.MediaPlayIcon(), func() { v.again(0) })
	resume := v.resumeBtn
	more := widget.NewButtonWithIcon("Train more epochs", theme.ContentAddIcon(), func() {
		if err := v.more.Validate(); err != nil {
			wz.status.SetText(err.Error())
			return
		}
		n, _ := strconv.Atoi(v.more.Text)
		v.again(n)
	})
	export := widget.NewButtonWithIcon("Export…", theme.UploadIcon(), v.export)
	actions := container.NewHBox(open, try, resume, widget.NewLabel("or"), more, container.NewGridWrap(fyne.NewSize(60, 36), v.more), export)
	tables := container.NewHBox(
		container.NewVBox(widget.NewLabelWithStyle("Per class (best model)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.table),
		widget.NewSeparator(),
		container.NewVBox(widget.NewLabelWithStyle("Confusion matrix (rows: true, columns: predicted)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.confuse))
	body := container.NewVBox(v.summary, v.folder, actions, v.tryOut, tables,
		widget.NewLabelWithStyle("Sample predictions (✔ right, ✖ wrong)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.samples)
	v.content = container.NewVScroll(body)
	return v
}

func (v *resultsView) enter() {
	res := v.wz.result
	v.table.RemoveAll()
	v.confuse.RemoveAll()
	v.samples.RemoveAll()
	v.tryOut.SetText("")
	if res == nil {
		v.summary.SetText("No results yet: train a model first.")
		return
	}
	if res.Stopped == "stopped by the user" {
		v.resumeBtn.Enable()
	} else {
		v.resumeBtn.Disable()
	}
	m := res.Test
	split := "test"
	if m == nil {
		m, split = res.Val, "validation"
	}
	if m == nil {
		v.summary.SetText(fmt.Sprintf("The run stopped after %d epochs, before any result: resume it.", res.Epochs))
		v.folder.SetText("Run folder: " + res.RunDir)
		return
	}
	v.summary.SetText(fmt.Sprintf("Accuracy on the %s images: %.2f%% (top-5 %.2f%%, loss %.4f) · best epoch %d of %d · trained on %s",
		split, 100*m.Accuracy, 100*m.Top5, m.Loss, res.BestEpoch, res.Epochs, strings.ToUpper(res.Device)))
	folder := "Run folder: " + res.RunDir + "  (args.yaml, results.csv, best.ckpt, last.ckpt, labels.txt)"
	if g := res.GPU; g != nil {
		folder += "\n" + g.Summary()
	}
	v.folder.SetText(folder)
	grid := container.NewGridWithColumns(5, bold("class"), bold("precision"), bold("recall"), bold("F1"), bold("images"))
	for _, c := range m.PerClass {
		grid.Add(widget.NewLabel(c.Class))
		grid.Add(widget.NewLabel(fmt.Sprintf("%.3f", c.Precision)))
		grid.Add(widget.NewLabel(fmt.Sprintf("%.3f", c.Recall)))
		grid.Add(widget.NewLabel(fmt.Sprintf("%.3f", c.F1)))
		grid.Add(widget.NewLabel(strconv.Itoa(c.Support)))
	}
	v.table.Add(container.NewHBox(grid))
	if n := len(m.Confusion); n > 0 && n <= 20 {
		cm := container.NewGridWithColumns(n + 1)
		cm.Add(widget.NewLabel(""))
		for _, c := range m.PerClass {
			cm.Add(bold(c.Class))
		}
		for i, row := range m.Confusion {
			cm.Add(bold(m.PerClass[i].Class))
			for j, n := range row {
				l := widget.NewLabel(strconv.Itoa(n))
				if i == j {
					l.Importance = widget.SuccessImportance
				} else if n > 0 {
					l.Importance = widget.DangerImportance
				}
				cm.Add(l)
			}
		}
		v.confuse.Add(container.NewHBox(cm))
	}
	v.showSamples(res)
}

func bold(s string) *widget.Label {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// showSamples classifies validation images with the best model in the
// background and shows some right and some wrong.
func (v *resultsView) showSamples(res *trainer.Result) {
	ds := v.wz.dataset
	if ds == nil {
		return
	}
	v.wz.background(func() {
		p, err := trainer.LoadPredictor(filepath.Join(res.RunDir, "best"))
		if err != nil {
			return
		}
		var right, wrong []fyne.CanvasObject
		for i := 0; i < ds.Val.Len() && (len(right) < 8 || len(wrong) < 8); i++ {
			img := toImage(ds, ds.Val, i)
			preds, err := p.PredictImage(img, "no")
			if err != nil || len(preds) == 0 {
				continue
			}
			truth := ds.Classes[ds.Val.Labels[i]]
			ok := preds[0].Class == truth
			if (ok && len(right) >= 8) || (!ok && len(wrong) >= 8) {
				continue
			}
			ci := canvas.NewImageFromImage(img)
			ci.FillMode, ci.ScaleMode = canvas.ImageFillContain, canvas.ImageScalePixels
			ci.SetMinSize(fyne.NewSize(72, 72))
			mark := "✔ " + preds[0].Class
			if !ok {
				mark = fmt.Sprintf("✖ %s (is %s)", preds[0].Class, truth)
			}
			l := widget.NewLabel(mark)
			l.Truncation = fyne.TextTruncateEllipsis
			cell := container.NewBorder(nil, l, nil, nil, ci)
			if ok {
				right = append(right, cell)
			} else {
				wrong = append(wrong, cell)
			}
		}
		v.wz.ui(func() {
			for _, o := range append(right, wrong...) {
				v.samples.Add(o)
			}
		})
	})
}

func (v *resultsView) tryImage() {
	res := v.wz.result
	if res == nil || v.wz.deps.PickFile == nil {
		return
	}
	v.wz.deps.PickFile(v.wz.win, func(path string) {
		if path == "" {
			return
		}
		v.tryOut.SetText("Classifying " + path + "…")
		v.wz.background(func() {
			text := ""
			p, err := trainer.LoadPredictor(filepath.Join(res.RunDir, "best"))
			var preds []trainer.Prediction
			if err == nil {
				preds, err = p.PredictFile(path, "auto")
			}
			if err != nil {
				text = err.Error()
			} else {
				text = filepath.Base(path) + ":"
				for i := 0; i < len(preds) && i < 3; i++ {
					text += fmt.Sprintf("  %s %.1f%%", preds[i].Class, 100*preds[i].Prob)
				}
			}
			v.wz.ui(func() { v.tryOut.SetText(text) })
		})
	})
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

// export copies the model, labels and settings into a chosen folder.
func (v *resultsView) export() {
	res := v.wz.result
	if res == nil || v.wz.deps.PickFolder == nil {
		return
	}
	v.wz.deps.PickFolder(v.wz.win, func(dir string) {
		if dir == "" {
			return
		}
		dst := filepath.Join(dir, filepath.Base(res.RunDir)+"-model")
		err := os.MkdirAll(dst, 0o755)
		for _, f := range []string{"best.ckpt", "labels.txt", "args.yaml", "results.csv", "results.json"} {
			if err == nil {
				err = copyFile(filepath.Join(res.RunDir, f), filepath.Join(dst, f))
			}
		}
		if err != nil {
			v.wz.status.SetText("Export: " + err.Error())
			return
		}
		v.tryOut.SetText("Exported to " + dst + " (use it with: gpuwizard predict --model " + filepath.Join(dst, "best.ckpt") + " IMAGE)")
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("%s exists: choose another folder (nothing is overwritten)", dst)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
