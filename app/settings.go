package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gopkg.in/yaml.v3"

	"gpuwizard/trainer"
)

const prefSettings = "settings.yaml" // the last-used settings, in the app's preferences

// settingsView is the Settings step.
type settingsView struct {
	wz       *wizard
	model    *widget.Select
	opt      *widget.Select
	sched    *widget.Select
	entries  map[string]*widget.Entry
	device   *widget.RadioGroup
	rejected *fyne.Container
	estimate *widget.Label
	content  fyne.CanvasObject
}

func intValidator(field string, lo, hi int) fyne.StringValidator {
	return func(s string) error {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < lo || v > hi {
			return fmt.Errorf("%s: a whole number from %d to %d", field, lo, hi)
		}
		return nil
	}
}

func floatValidator(field string, lo, hi float64, open bool) fyne.StringValidator {
	return func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v < lo || v > hi || (open && (v == lo || v == hi)) {
			if open {
				return fmt.Errorf("%s: a number above %g and below %g", field, lo, hi)
			}
			return fmt.Errorf("%s: a number from %g to %g", field, lo, hi)
		}
		return nil
	}
}

func newSettingsView(wz *wizard) *settingsView {
	v := &settingsView{wz: wz, entries: map[string]*widget.Entry{}}
	v.model = widget.NewSelect([]string{"auto", "mlp", "lenet", "cnn"}, nil)
	v.opt = widget.NewSelect([]string{"adam", "sgd"}, nil)
	v.sched = widget.NewSelect([]string{"cosine", "step", "constant"}, nil)
	fields := []struct {
		key, label, hint string
		val              fyne.StringValidator
	}{
		{"epochs", "Epochs", "passes over the training images", intValidator("epochs", 1, 10000)},
		{"batch", "Batch size", "images per step (64 is a good start)", intValidator("batch size", 1, 4096)},
		{"lr", "Learning rate", "Adam: 0.001, SGD: 0.01 to 0.1", floatValidator("learning rate", 0, 10, true)},
		{"image_size", "Image size", "0: the dataset's own (folders: 32)", func(s string) error {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || !(v == 0 || (v >= 8 && v <= 256)) {
				return errors.New("image size: 0, or 8 to 256 pixels")
			}
			return nil
		}},
		{"val_split", "Validation split", "the share kept aside when there is no val folder", floatValidator("validation split", 0, 1, true)},
		{"seed", "Seed", "the same seed repeats a run exactly", intValidator("seed", -1<<31, 1<<31)},
		{"patience", "Early stopping", "epochs without improvement before stopping (0: off)", intValidator("early stopping", 0, 10000)},
	}
	form := widget.NewForm(widget.NewFormItem("Model", v.model))
	for _, f := range fields {
		e := widget.NewEntry()
		e.Validator = f.val
		v.entries[f.key] = e
		item := widget.NewFormItem(f.label, e)
		item.HintText = f.hint
		form.AppendItem(item)
		if f.key == "lr" {
			form.AppendItem(widget.NewFormItem("Optimizer", v.opt))
			form.AppendItem(widget.NewFormItem("Schedule", v.sched))
		}
	}
	presets := container.NewHBox(widget.NewLabel("Presets:"),
		widget.NewButton("Quick test", func() { v.preset("quick") }),
		widget.NewButton("Default", func() { v.preset("default") }),
		widget.NewButton("Thorough", func() { v.preset("thorough") }))
	v.device = widget.NewRadioGroup([]string{"Automatic", "CPU"}, nil)
	v.device.Required = true
	v.rejected = container.NewVBox()
	v.estimate = widget.NewLabel("")
	v.estimate.Wrapping = fyne.TextWrapWord
	estimate := widget.NewButtonWithIcon("Estimate time per epoch", theme.HistoryIcon(), v.runEstimate)
	save := widget.NewButtonWithIcon("Save settings…", theme.DocumentSaveIcon(), v.saveYAML)
	load := widget.NewButtonWithIcon("Load settings…", theme.FolderOpenIcon(), v.loadYAML)
	right := container.NewVBox(
		widget.NewLabelWithStyle("Device", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.device, v.rejected,
		widget.NewSeparator(), estimate, v.estimate, widget.NewSeparator(), container.NewHBox(save, load))
	v.content = container.NewBorder(presets, nil, nil, nil,
		container.NewHSplit(container.NewVScroll(form), container.NewVScroll(right)))
	v.restore()
	return v
}

// set shows a configuration in the widgets.
func (v *settingsView) set(c trainer.Config) {
	v.model.SetSelected(c.Model)
	v.opt.SetSelected(c.Optimizer)
	v.sched.SetSelected(c.Schedule)
	v.entries["epochs"].SetText(strconv.Itoa(c.Epochs))
	v.entries["batch"].SetText(strconv.Itoa(c.Batch))
	v.entries["lr"].SetText(strconv.FormatFloat(c.LR, 'g', -1, 64))
	v.entries["image_size"].SetText(strconv.Itoa(c.ImageSize))
	v.entries["val_split"].SetText(strconv.FormatFloat(c.ValSplit, 'g', -1, 64))
	v.entries["seed"].SetText(strconv.FormatInt(c.Seed, 10))
	v.entries["patience"].SetText(strconv.Itoa(c.Patience))
	switch {
	case c.Device == "cpu":
		v.device.SetSelected("CPU")
	case strings.HasPrefix(c.Device, "cuda"):
		n := strings.TrimPrefix(strings.TrimPrefix(c.Device, "cuda"), ":")
		if n == "" {
			n = "0"
		}
		v.device.SetSelected("Automatic")
		for _, o := range v.device.Options {
			if strings.HasPrefix(o, "GPU "+n+":") {
				v.device.SetSelected(o)
			}
		}
	default:
		v.device.SetSelected("Automatic")
	}
}

// read turns the widgets into a configuration; the first invalid field
// is the error.
func (v *settingsView) read() (trainer.Config, error) {
	c := v.wz.cfg
	for _, k := range []string{"epochs", "batch", "lr", "image_size", "val_split", "seed", "patience"} {
		if err := v.entries[k].Validate(); err != nil {
			return c, err
		}
	}
	atoi := func(k string) int { n, _ := strconv.Atoi(strings.TrimSpace(v.entries[k].Text)); return n }
	atof := func(k string) float64 { f, _ := strconv.ParseFloat(strings.TrimSpace(v.entries[k].Text), 64); return f }
	c.Model, c.Optimizer, c.Schedule = v.model.Selected, v.opt.Selected, v.sched.Selected
	c.Epochs, c.Batch, c.LR, c.ImageSize = atoi("epochs"), atoi("batch"), atof("lr"), atoi("image_size")
	c.ValSplit, c.Seed, c.Patience = atof("val_split"), int64(atoi("seed")), atoi("patience")
	c.Device = "auto"
	switch sel := v.device.Selected; {
	case sel == "CPU":
		c.Device = "cpu"
	case strings.HasPrefix(sel, "GPU "):
		c.Device = "cuda:" + strings.TrimPrefix(sel[:strings.Index(sel, ":")], "GPU ")
	}
	if c.WarmupEpochs > float64(c.Epochs) {
		c.WarmupEpochs = float64(c.Epochs)
	}
	c.Data = v.wz.dataArg
	return c, c.Validate()
}

func (v *settingsView) preset(name string) {
	c := trainer.Defaults()
	c.Data = v.wz.dataArg
	switch name {
	case "quick":
		c.Epochs, c.WarmupEpochs = 2, 0
	case "thorough":
		c.Epochs, c.Patience, c.WarmupEpochs = 30, 5, 2
	}
	c.Project = v.wz.cfg.Project
	v.set(c)
}

func (v *settingsView) enter() {
	// Devices: automatic and the CPU always; each GPU the doctor accepts
	// as a choice, each one it rejects shown disabled with why.
	v.rejected.RemoveAll()
	opts := []string{"Automatic", "CPU"}
	if r := v.wz.report; r != nil && r.Facts != nil {
		ready, _, reason := r.DriverReady()
		for _, g := range r.Facts.NVML.GPUs {
			if ready {
				opts = append(opts, fmt.Sprintf("GPU %d: %s", g.Index, g.Name))
				continue
			}
			opt := widget.NewRadioGroup([]string{fmt.Sprintf("GPU %d: %s", g.Index, g.Name)}, nil)
			opt.Disable()
			note := widget.NewLabel("Not available: " + reason)
			note.Wrapping = fyne.TextWrapWord
			note.Importance = widget.WarningImportance
			v.rejected.Add(container.NewVBox(opt, note))
		}
		if len(r.Facts.NVML.GPUs) == 0 {
			note := widget.NewLabel("No GPU to choose: " + reason)
			note.Wrapping = fyne.TextWrapWord
			note.Importance = widget.LowImportance
			v.rejected.Add(note)
		}
	}
	sel := v.device.Selected
	v.device.Options = opts
	v.device.Selected = ""
	v.device.SetSelected("Automatic")
	for _, o := range opts {
		if o == sel {
			v.device.SetSelected(o)
		}
	}
	v.device.Refresh()
	v.estimate.SetText("")
	if v.wz.dataset != nil {
		v.runEstimate() // a few steps in the background; the step stays usable
	}
}

func (v *settingsView) leave() error {
	c, err := v.read()
	if err != nil {
		return err
	}
	v.wz.cfg = c
	v.wz.app.Preferences().SetString(prefSettings, string(c.YAML()))
	return nil
}

// restore loads the last-used settings from the app's preferences.
func (v *settingsView) restore() {
	c := trainer.Defaults()
	if s := v.wz.app.Preferences().String(prefSettings); s != "" {
		var saved trainer.Config = c
		if yaml.Unmarshal([]byte(s), &saved) == nil && saved.Validate() == nil {
			c = saved
		}
	}
	c.Data = v.wz.dataArg
	c.Project = runsFolder(c.Project)
	v.wz.cfg = c
	v.set(c)
}

// runsFolder anchors a relative runs folder in the user's home: an app
// started from a file manager may run in "/", where it cannot write.
func runsFolder(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, "gpuwizard", p)
}

func (v *settingsView) runEstimate() {
	c, err := v.read()
	if err != nil {
		v.estimate.SetText(err.Error())
		return
	}
	ds := v.wz.dataset
	if ds == nil {
		v.estimate.SetText("Choose a dataset first.")
		return
	}
	v.estimate.SetText("Measuring a few steps…")
	v.wz.background(func() {
		d, err := trainer.EstimateEpoch(v.wz.ctx, c, ds)
		v.wz.ui(func() {
			if err != nil {
				v.estimate.SetText(err.Error())
				return
			}
			v.estimate.SetText(fmt.Sprintf("About %s per epoch on the CPU, %s for %d epochs (measured now on this machine).",
				d.Round(100*time.Millisecond), (d * time.Duration(c.Epochs)).Round(time.Second), c.Epochs))
		})
	})
}

func (v *settingsView) saveYAML() {
	c, err := v.read()
	if err != nil {
		v.wz.status.SetText(err.Error())
		return
	}
	if v.wz.deps.SaveFile == nil {
		return
	}
	v.wz.deps.SaveFile(v.wz.win, "run.yaml", func(p string) {
		if p == "" {
			return
		}
		if err := os.WriteFile(p, c.YAML(), 0o644); err != nil {
			v.wz.status.SetText("Saving the settings: " + err.Error())
			return
		}
		v.wz.status.SetText("")
	})
}

func (v *settingsView) loadYAML() {
	if v.wz.deps.PickFile == nil {
		return
	}
	v.wz.deps.PickFile(v.wz.win, func(p string) {
		if p == "" {
			return
		}
		c, err := trainer.LoadConfigFile(p, trainer.Defaults())
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			v.wz.status.SetText(err.Error())
			return
		}
		v.set(c)
	})
}
