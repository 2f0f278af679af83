package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/cli"
	"gpuwizard/internal/atomicfile"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// settingsFile is where the last-used settings are kept: a file of our
// own, written atomically. (Fyne's preferences rewrite their file in place
// and reload it on every change they see, and so read it empty now and
// then: "Preferences load error: EOF".)
func settingsFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gpuwizard", "settings.yaml")
}

// settingsView is the Settings step.
type settingsView struct {
	wz       *wizard
	model    *widget.Select
	opt      *widget.Select
	sched    *widget.Select
	entries  map[string]*widget.Entry
	device   *widget.RadioGroup
	rejected *fyne.Container
	autoDev  *widget.Label // what Automatic will use
	auto     *widget.Label // what model "auto" picks, and why
	estimate *widget.Label
	right    *fyne.Container
	form     *widget.Form
	rightBox *container.Scroll
	content  fyne.CanvasObject

	setting   bool               // set() is filling the widgets: no reactions
	estGen    int                // the estimate on screen; older answers are dropped
	estCancel context.CancelFunc // stops the running estimate
	estTimer  *time.Timer        // the pending re-estimate after a change
	estKey    string             // what the estimate on screen was measured for
	estData   *data.Dataset      // and on which dataset
	estRun    sync.WaitGroup     // the estimates still measuring (training waits for them)
	detecting bool               // the task the settings were last shown for
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
		{"batch", "Batch size", classifierBatchHint, intValidator("batch size", 1, 4096)},
		{"lr", "Learning rate", "Adam: 0.001, SGD: 0.01 to 0.1", floatValidator("learning rate", 0, 10, true)},
		{"image_size", "Image size", classifierSizeHint, v.checkImageSize},
		{"val_split", "Validation split", "the share kept aside when there is no val folder", floatValidator("validation split", 0, 1, true)},
		{"seed", "Seed", "the same seed repeats a run exactly", intValidator("seed", -1<<31, 1<<31)},
		{"patience", "Early stopping", "epochs without improvement before stopping (0: off)", intValidator("early stopping", 0, 10000)},
	}
	v.auto = widget.NewLabel("")
	v.auto.Wrapping = fyne.TextWrapWord
	v.auto.Importance = widget.LowImportance
	form := widget.NewForm(widget.NewFormItem("Model", container.NewVBox(v.model, v.auto)))
	v.form = form
	for _, f := range fields {
		e := widget.NewEntry()
		e.Validator = f.val
		e.OnChanged = func(string) { v.changed(f.key) }
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
	v.model.OnChanged = func(string) { v.changed("model") }
	v.opt.OnChanged = func(string) { v.changed("optimizer") }
	v.sched.OnChanged = func(string) { v.changed("schedule") }
	v.device = widget.NewRadioGroup([]string{"Automatic", "CPU"}, nil)
	v.device.Required = true
	v.device.OnChanged = func(string) { v.changed("device") }
	v.autoDev = widget.NewLabel("")
	v.autoDev.Wrapping = fyne.TextWrapWord
	v.autoDev.Importance = widget.LowImportance
	v.rejected = container.NewVBox()
	v.estimate = widget.NewLabel("")
	v.estimate.Wrapping = fyne.TextWrapWord
	estimate := widget.NewButtonWithIcon("Measure again", theme.HistoryIcon(), v.runEstimate)
	save := widget.NewButtonWithIcon("Save settings…", theme.DocumentSaveIcon(), v.saveYAML)
	load := widget.NewButtonWithIcon("Load settings…", theme.FolderOpenIcon(), v.loadYAML)
	v.right = container.NewVBox(
		widget.NewLabelWithStyle("Device", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.device, v.autoDev, v.rejected,
		widget.NewSeparator(),
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("Time per epoch", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), estimate),
		v.estimate, widget.NewSeparator(), container.NewHBox(save, load))
	v.rightBox = container.NewVScroll(v.right)
	split := container.NewHSplit(container.NewVScroll(form), v.rightBox)
	split.Offset = 0.58
	v.content = container.NewBorder(presets, nil, nil, nil, split)
	v.restore()
	return v
}

// Image size's and batch size's hints: a classifier's and a detector's.
const (
	classifierSizeHint  = "0: the dataset's own (folders: their shared size up to 64 px, else 32)"
	detectorSizeHint    = "the canvas images are letterboxed to: 0 is 320 (the built-in set 128); 128 to 640, a multiple of 32"
	classifierBatchHint = "images per step (64 is a good start)"
	detectorBatchHint   = "images per step (16 is a good start: a small detector learns more per epoch)"
)

// checkImageSize validates the image size field: for a classifier 0 or
// 8 to 256 pixels, for a detector checkDetectSize's rule.
func (v *settingsView) checkImageSize(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if v.wz.isDetection() {
		if err != nil {
			return checkDetectSize(-1)
		}
		return checkDetectSize(n)
	}
	if err != nil || !(n == 0 || (n >= 8 && n <= 256)) {
		return errors.New("image size: 0, or 8 to 256 pixels")
	}
	return nil
}

// changed reacts to an edit: the step's error clears once every field is
// valid again (or names the field still wrong), "auto" says what it picks,
// and the time estimate is measured again (debounced) when what it depends
// on changed.
func (v *settingsView) changed(key string) {
	if v.setting || v.wz.cur != 2 || v.wz.inRuns {
		return
	}
	c, err := v.read()
	if v.wz.status.Text != "" {
		if err != nil {
			v.wz.fail(err.Error())
		} else {
			v.wz.status.SetText("")
		}
	}
	v.showAuto(c)
	if v.wz.isDetection() {
		return // a detector's time is not estimated here (see enter)
	}
	switch key {
	case "epochs", "batch", "model", "device", "image_size":
		if err != nil {
			v.cancelEstimate()
			v.estimate.SetText("The estimate waits for valid settings: " + err.Error())
			v.estKey = ""
			return
		}
		if estimateKey(c) == v.estKey {
			return
		}
		if v.estTimer != nil {
			v.estTimer.Stop()
		}
		v.estimate.SetText("The settings changed: measuring again in a moment…")
		v.estTimer = time.AfterFunc(700*time.Millisecond, func() { v.wz.uiAsync(v.runEstimate) })
	}
}

// estimateKey is what an estimate depends on.
func estimateKey(c trainer.Config) string {
	return fmt.Sprintf("%s|%d|%d|%s|%d", c.Model, c.Epochs, c.Batch, c.Device, c.ImageSize)
}

// showAuto says what "auto" picks for the chosen dataset, and why.
func (v *settingsView) showAuto(c trainer.Config) {
	if c.Model != "auto" {
		v.auto.SetText("")
		v.auto.Hide()
		v.form.Refresh()
		return
	}
	if ds := v.wz.detSet; ds != nil {
		v.auto.SetText(fmt.Sprintf("Auto trains a detector on this %s set: %s, the smaller one (%s is larger and slower), on %d×%d canvases.",
			strings.ToUpper(ds.Format), detectorModels[0], detectorModels[len(detectorModels)-1], ds.Size, ds.Size))
		v.auto.Show()
		v.form.Refresh()
		return
	}
	kind, why := trainer.AutoModel(c, v.wz.dataset)
	text := "Auto picks " + kind + ": " + why + "."
	if ds := v.wz.dataset; ds != nil && ds.SizeNote != "" && c.ImageSize == 0 {
		text += " " + ds.SizeNote + "."
	}
	v.auto.SetText(strings.ReplaceAll(text, "..", "."))
	v.auto.Show()
	v.form.Refresh()
}

// set shows a configuration in the widgets.
func (v *settingsView) set(c trainer.Config) {
	v.setting = true
	defer func() { v.setting = false }()
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
	switch {
	case v.wz.isDetection():
		detectorPreset(&c, name, v.wz.detSet.Size)
	case name == "quick":
		c.Epochs, c.WarmupEpochs = 2, 0
	case name == "thorough":
		c.Epochs, c.Patience, c.WarmupEpochs = 30, 5, 2
	}
	c.Project = v.wz.cfg.Project
	v.set(c)
	v.changed("epochs") // the estimate follows the preset
}

// detectorPreset sets a detector's preset on c (which holds the
// defaults): a detector trains longer than a classifier, in batches of
// 16; the quick test on the canvas its set was loaded at (size), the
// others on the set's default canvas (320; the built-in set 128).
func detectorPreset(c *trainer.Config, name string, size int) {
	c.Model, c.Batch, c.ImageSize = "auto", trainer.DefaultDetectBatch, 0
	switch name {
	case "quick":
		c.Epochs, c.WarmupEpochs, c.ImageSize = 3, 0, size
	case "thorough":
		c.Epochs, c.Patience, c.WarmupEpochs = 100, 20, 3
	default:
		c.Epochs, c.WarmupEpochs = 30, 1
	}
}

// setModels offers the models of the chosen dataset's task: the
// classifiers, or the detectors; a choice of the other task becomes
// auto.
func (v *settingsView) setModels() {
	opts := []string{"auto", "mlp", "lenet", "cnn"}
	hint, batchHint := classifierSizeHint, classifierBatchHint
	if v.wz.isDetection() {
		opts, hint, batchHint = append([]string{"auto"}, detectorModels...), detectorSizeHint, detectorBatchHint
	}
	v.setting = true
	defer func() { v.setting = false }()
	v.model.Options = opts
	if !slices.Contains(opts, v.model.Selected) {
		v.model.SetSelected("auto")
	}
	v.model.Refresh()
	v.followTask()
	for _, it := range v.form.Items {
		want := map[fyne.CanvasObject]string{v.entries["image_size"]: hint, v.entries["batch"]: batchHint}[it.Widget]
		if want != "" && it.HintText != want {
			it.HintText = want
			v.form.Refresh()
		}
	}
	v.entries["image_size"].Validate()
}

// followTask moves a batch size still at one task's default to the
// other's when the task changes (a detector learns far more per epoch in
// batches of 16 than of the classifiers' 64); a batch the user typed
// stays.
func (v *settingsView) followTask() {
	det := v.wz.isDetection()
	if det == v.detecting {
		return
	}
	v.detecting = det
	from, to := trainer.Defaults().Batch, trainer.DefaultDetectBatch
	if !det {
		from, to = to, from
	}
	if b := v.entries["batch"]; b != nil && strings.TrimSpace(b.Text) == strconv.Itoa(from) {
		b.SetText(strconv.Itoa(to))
	}
}

func (v *settingsView) enter() {
	v.setModels()
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
	v.setting = true
	v.device.Options = opts
	v.device.Selected = ""
	v.device.SetSelected("Automatic")
	for _, o := range opts {
		if o == sel {
			v.device.SetSelected(o)
		}
	}
	v.setting = false
	v.device.Refresh()
	v.autoDev.SetText(v.automaticUses())
	// The options changed: lay the column out again, or the radio group
	// keeps its old height and the GPUs hide under what follows.
	v.right.Refresh()
	v.rightBox.Refresh()
	c, err := v.read()
	v.showAuto(c)
	if v.wz.isDetection() {
		v.cancelEstimate()
		v.estKey = ""
		v.estimate.SetText("A detector's time per epoch is measured as it trains: the Train step shows its speed and the time left from the first steps on.")
		return
	}
	if err == nil && estimateKey(c) == v.estKey && v.wz.dataset == v.estData {
		return // the estimate on screen still holds
	}
	v.estimate.SetText("")
	if v.wz.dataset != nil {
		v.runEstimate() // a few steps in the background; the step stays usable
	}
}

// automaticUses says what Automatic will pick on this machine.
func (v *settingsView) automaticUses() string {
	r := v.wz.report
	if r == nil {
		return "Automatic: the GPU when the check finds it usable, else the CPU."
	}
	ok, name, reason := r.DriverReady()
	if ok {
		return "Automatic uses GPU 0 (" + name + ")."
	}
	return "Automatic uses the CPU: " + reason + "."
}

func (v *settingsView) leave() error {
	c, err := v.read()
	if err != nil {
		return err
	}
	// A measurement still running would share the machine (and memory)
	// with the training: stop it; the estimate on screen stays.
	measuring := v.estCancel != nil
	v.cancelEstimate() // and a pending re-estimate
	if measuring {
		v.estimate.SetText("")
		v.estKey = ""
	}
	if c != v.wz.cfg {
		// Other settings (or another dataset): the run on the Train step
		// and its results belong to the old ones.
		v.wz.cfg = c
		v.wz.result = nil
		v.wz.train.reset()
	}
	if p := v.wz.deps.SettingsFile; p != "" {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			atomicfile.Write(atomicfile.OS{}, p, c.YAML()) // best effort: the run does not need it
		}
	}
	return nil
}

// restore loads the last-used settings from the app's preferences.
func (v *settingsView) restore() {
	c := trainer.Defaults()
	if p := v.wz.deps.SettingsFile; p != "" {
		// A regular file of at most a MiB, strictly decoded; anything else
		// (a damaged or foreign file) leaves the defaults.
		if saved, err := trainer.LoadConfigFile(p, c); err == nil && saved.Validate() == nil {
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

// cancelEstimate stops a running or pending estimate.
func (v *settingsView) cancelEstimate() {
	v.estGen++
	if v.estTimer != nil {
		v.estTimer.Stop()
	}
	if v.estCancel != nil {
		v.estCancel()
		v.estCancel = nil
	}
}

// runEstimate measures a few steps on the device a run would use (the GPU
// when Automatic picks it), in the background; a newer estimate replaces
// an older one.
func (v *settingsView) runEstimate() {
	v.cancelEstimate()
	c, err := v.read()
	if err != nil {
		v.estimate.SetText("The estimate waits for valid settings: " + err.Error())
		return
	}
	ds := v.wz.dataset
	if v.wz.isDetection() {
		return // a detector is not estimated (see enter)
	}
	if ds == nil {
		v.estimate.SetText("Choose a dataset first.")
		return
	}
	gen := v.estGen
	ctx, cancel := context.WithCancel(v.wz.ctx)
	v.estCancel = cancel
	opts := trainer.Options{Probe: v.wz.deps.Probe, OpenCUDA: v.wz.deps.OpenCUDA}
	if r := v.wz.report; r != nil { // the check already answered: no second doctor
		rep := *r
		opts.Probe = func(context.Context) trainer.DeviceStatus { return cli.DeviceStatus(rep) }
	}
	v.estimate.SetText("Measuring a few steps…")
	v.estRun.Add(1)
	v.wz.background(func() {
		e, err := trainer.EstimateEpochOn(ctx, c, ds, opts)
		// The measurement built a whole network: give its memory back
		// before a training builds another (the two peaks would add up).
		debug.FreeOSMemory()
		v.estRun.Done()
		v.wz.ui(func() {
			if gen != v.estGen {
				return // the settings changed since
			}
			cancel()
			v.estCancel = nil
			if err != nil {
				v.estimate.SetText("No estimate: " + err.Error())
				v.estKey = ""
				return
			}
			v.estKey, v.estData = estimateKey(c), ds
			v.estimate.SetText(estimateText(e, c.Epochs))
		})
	})
}

// estimateText is the estimate in words: per epoch, for the run, where.
func estimateText(e trainer.Estimate, epochs int) string {
	where := "the CPU"
	if e.Device != "" && e.Device != "cpu" {
		where = strings.ToUpper(e.Device)
	}
	s := fmt.Sprintf("About %s per epoch on %s, %s for %d epochs (measured now on this machine).",
		roughDuration(e.PerEpoch), where, roughDuration(e.PerEpoch*time.Duration(epochs)), epochs)
	return s
}

// roughDuration rounds d to two significant figures (150ms, 2.4s, 29s;
// whole minutes from 17 minutes on), so that the per-epoch and the total
// figure agree.
func roughDuration(d time.Duration) time.Duration {
	for unit := time.Duration(1); unit <= 10*time.Second; unit *= 10 {
		if d < 100*unit {
			return d.Round(unit)
		}
	}
	return d.Round(time.Minute)
}

// saveYAML writes the settings to a YAML file the user names, and says
// where it went (or why it could not).
func (v *settingsView) saveYAML() {
	c, err := v.read()
	if err != nil {
		v.wz.fail(err.Error())
		return
	}
	if v.wz.deps.SaveFile == nil {
		return
	}
	v.wz.deps.SaveFile(v.wz.win, "run.yaml", func(p string) {
		if p == "" {
			return
		}
		if err := atomicfile.Write(atomicfile.OS{}, p, c.YAML()); err != nil {
			v.wz.fail("The settings were not saved: " + err.Error())
			return
		}
		v.wz.inform("Settings saved to " + p + " (Load settings… reads them back; gpuwizard train --config " + filepath.Base(p) + " trains with them).")
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
		if err != nil {
			v.wz.fail(err.Error()) // the line and setting in words, as gpuwizard train --config says it
			return
		}
		if err := c.Validate(); err != nil {
			v.wz.fail(filepath.Base(p) + ": " + strings.TrimPrefix(err.Error(), "trainer: config: "))
			return
		}
		c.Data, c.Project = v.wz.dataArg, v.wz.cfg.Project
		v.set(c)
		v.wz.status.SetText("")
		v.changed("model")
		v.wz.inform("Settings loaded from " + p + ".")
	})
}
