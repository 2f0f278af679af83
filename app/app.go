// Package app is the Fyne wizard. It is the only package that imports Fyne.
package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	_ "gpuwizard/app/internal/localefix" // before Fyne reads the locale
	"gpuwizard/assets"
	"gpuwizard/cli"
	"gpuwizard/gpu"
	"gpuwizard/gpu/fix"
	"gpuwizard/gpu/probe"
	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

const appID = "io.gpuwizard.app"

// seedPreferences writes an empty JSON object where Fyne keeps the
// preferences when there is no file yet (or an empty one). Fyne watches
// that folder and reloads on every change, and its first save creates the
// file empty before writing it: the reload then read nothing and logged
// "Preferences load error: EOF" on every first start.
func seedPreferences(id string) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return
	}
	p := filepath.Join(dir, "fyne", id, "preferences.json")
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		os.WriteFile(p, []byte("{}\n"), 0o600)
	}
}

// Checker runs the doctor; tests pass a fake.
type Checker func(ctx context.Context) (gpu.Report, error)

// Run opens the main window and blocks until it is closed.
func Run(ctx context.Context) error {
	seedPreferences(appID)
	a := fyneapp.NewWithID(appID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("gpuwizard")
	wz := newWizard(ctx, a, w, LiveDeps())
	w.SetContent(wz.content)
	w.Resize(fyne.NewSize(1100, 720))
	w.SetCloseIntercept(func() { wz.confirmClose() })
	w.ShowAndRun()
	return nil
}

// LiveDeps are the real machine, file dialogs and trainer.
func LiveDeps() Deps {
	return Deps{
		Check:    cli.LiveChecker,
		Deep:     cli.DeepChecker,
		Paste:    cli.PasteChecker,
		LoadData: data.Load,
		Train:    trainer.Run,
		Probe:    cli.LiveProbe,
		Sample:   cli.LiveSampler(probe.NewSampler(nil)),
		WatchUID: os.Getuid(),
		PickFolder: func(w fyne.Window, done func(string)) {
			dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
				if err != nil || u == nil {
					done("")
					return
				}
				done(u.Path())
			}, w)
		},
		PickFile: func(w fyne.Window, done func(string)) {
			dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
				if err != nil || r == nil {
					done("")
					return
				}
				r.Close()
				done(r.URI().Path())
			}, w)
		},
		SaveFile: saveFileDialog,
		ExportTo: func(w fyne.Window, name string, done func(string, string)) {
			chooseExportFormat(w, func(format string) {
				if format == "" {
					done("", "")
					return
				}
				file := name + "-model"
				if format == trainer.ExportONNXFormat {
					file = name + ".onnx"
				}
				saveFileDialog(w, file, func(p string) {
					// The dialog created an empty file of that name: the
					// export is written beside it and renamed at the end.
					removeEmptyFile(p) // "" (cancelled) is no file: nothing to remove
					done(p, format)
				})
			})
		},
		Confirm: func(w fyne.Window, title, message, action string, done func(bool)) {
			confirmDestructive(w, title, message, action, done)
		},
		Fix:          &FixDeps{},
		OpenFolder:   openWithDesktop,
		SettingsFile: settingsFile(),
		RunIndex:     runIndex(),
	}
}

// runIndex is the trainer's index of run folders in the user's config
// folder ("" when there is none: the Runs view then lists the project).
func runIndex() string {
	p, err := trainer.DefaultRunIndex()
	if err != nil {
		return ""
	}
	return p
}

// confirmation is a question before a destructive action, on screen.
type confirmation struct {
	dialog         *dialog.CustomDialog
	cancel, action *widget.Button
}

// confirmDestructive asks before a destructive action: Cancel is the
// highlighted button and has the keyboard focus (Space answers it), the
// action ("Delete") is in the danger colour and must be chosen on purpose.
// done is called once, with true only for the action.
func confirmDestructive(w fyne.Window, title, message, action string, done func(bool)) *confirmation {
	msg := widget.NewLabel(message)
	msg.Wrapping = fyne.TextWrapWord
	const width = 460
	msg.Resize(fyne.NewSize(width, 1)) // the height of the text wrapped at that width
	body := container.NewGridWrap(fyne.NewSize(width, msg.MinSize().Height), msg)
	c := &confirmation{
		cancel: widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), nil),
		action: widget.NewButtonWithIcon(action, theme.DeleteIcon(), nil),
	}
	c.cancel.Importance = widget.HighImportance
	c.action.Importance = widget.DangerImportance
	c.dialog = dialog.NewCustomWithoutButtons(title, body, w)
	c.dialog.SetButtons([]fyne.CanvasObject{c.cancel, c.action})
	answered := false
	answer := func(ok bool) func() {
		return func() {
			if answered {
				return
			}
			answered = true
			c.dialog.Hide()
			done(ok)
		}
	}
	c.cancel.OnTapped, c.action.OnTapped = answer(false), answer(true)
	c.dialog.Show()
	w.Canvas().Focus(c.cancel)
	return c
}

// saveFileDialog asks for a file name with Fyne's save dialog, suggesting
// name; done gets its path, or "" when cancelled.
func saveFileDialog(w fyne.Window, name string, done func(string)) {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			done("")
			return
		}
		wc.Close()
		done(wc.URI().Path())
	}, w)
	d.SetFileName(name)
	d.Show()
}

// exportFormats are the export dialog's choices, in its order, with the
// format each means.
var exportFormats = []struct{ label, format string }{
	{"ONNX file: the model for OpenCV, ONNX Runtime, PyTorch and other tools", trainer.ExportONNXFormat},
	{"Folder copy: the whole run, for gpuwizard on another machine (predict, resume)", trainer.ExportFolder},
}

// chooseExportFormat asks how to export a run (ONNX first, chosen); done
// gets the format, or "" when cancelled. It returns the dialog, shown,
// and its choice.
func chooseExportFormat(w fyne.Window, done func(string)) (*dialog.ConfirmDialog, *widget.RadioGroup) {
	labels := make([]string, len(exportFormats))
	for i, f := range exportFormats {
		labels[i] = f.label
	}
	choice := widget.NewRadioGroup(labels, nil)
	choice.SetSelected(labels[0])
	choice.Required = true
	d := dialog.NewCustomConfirm("Export the model", "Choose where…", "Cancel", choice, func(ok bool) {
		if !ok {
			done("")
			return
		}
		for _, f := range exportFormats {
			if f.label == choice.Selected {
				done(f.format)
				return
			}
		}
		done("")
	}, w)
	d.Show()
	return d, choice
}

// openWithDesktop opens path with xdg-open (open on macOS, explorer on
// Windows) and says why when it cannot: no such program, or it failed.
func openWithDesktop(path string) error {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name = "explorer"
	}
	bin, err := osexec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s is not installed, so no file manager can be asked to open it: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := osexec.CommandContext(ctx, bin, path).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg != "" {
			return fmt.Errorf("%s failed: %s (%w)", name, msg, err)
		}
		return fmt.Errorf("%s failed: %w", name, err)
	}
	return nil
}

// confirmClose asks before closing the window during training, then stops
// the run cleanly (a resumable checkpoint is written) and closes.
func (wz *wizard) confirmClose() {
	if !wz.train.running() {
		wz.win.Close()
		return
	}
	dialog.ShowConfirm("Training is running",
		"Stop training and quit? The run is saved and can be resumed later.",
		func(ok bool) {
			if ok {
				wz.train.stopThen(wz.win.Close)
			}
		}, wz.win)
}

// checkView shows the doctor's verdict and findings. The check runs in a
// goroutine; widgets change only through fyne.Do.
type checkView struct {
	ctx      context.Context
	check    Checker
	paste    func(text string) (gpu.Report, error)
	onReport func(gpu.Report) // called with every check of this machine
	deep     func(ctx context.Context) (gpu.Report, error)
	last     *gpu.Report  // the report on screen
	do       func(func()) // runs on the UI goroutine; nil: fyne.DoAndWait
	busy     bool
	report   *widget.Entry // a report pasted from another machine
	source   *widget.Label // what the findings below are about
	verdict  *widget.Label
	progress *widget.ProgressBarInfinite
	list     *fyne.Container
	rerun    *widget.Button
	deepBtn  *widget.Button
	saveBtn  *widget.Button
	win      fyne.Window
	saveFile func(w fyne.Window, name string, done func(string))
	content  fyne.CanvasObject
	wg       sync.WaitGroup // the running check, for tests
	// fix applies fixable findings ("Fix it"); nil: no button. confirm
	// asks before it runs; fixing is the open panel.
	fix     *FixDeps
	confirm func(w fyne.Window, title, message, action string, done func(bool))
	fixing  *fixer
}

// openFix opens the "Fix it" panel for the report on screen.
func (c *checkView) openFix(rep gpu.Report) {
	c.fixing = newFixer(c, *c.fix, c.confirm, rep)
	c.fixing.show(c.win)
}

func newCheckView(ctx context.Context, check Checker) *checkView {
	c := &checkView{ctx: ctx, check: check}
	title := widget.NewLabelWithStyle("Is this machine ready to train on its NVIDIA GPU?", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict = widget.NewLabelWithStyle("Checking the GPU, driver, CUDA and Python frameworks…", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict.Wrapping = fyne.TextWrapWord
	c.progress = widget.NewProgressBarInfinite()
	c.list = container.NewVBox()
	c.rerun = widget.NewButtonWithIcon("Check this machine again", theme.ViewRefreshIcon(), c.run)
	c.deepBtn = widget.NewButtonWithIcon("Deep check (runs the GPU through PyTorch)", theme.SearchReplaceIcon(), c.runDeep)
	c.saveBtn = widget.NewButtonWithIcon("Save report…", theme.DocumentSaveIcon(), c.save)
	c.source = widget.NewLabel("This machine")
	c.source.TextStyle = fyne.TextStyle{Italic: true}
	c.report = widget.NewMultiLineEntry()
	c.report.SetPlaceHolder("Paste what the other machine printed: python -m torch.utils.collect_env, nvidia-smi, nvcc --version, the yolo output or the error traceback…")
	c.report.SetMinRowsVisible(5)
	c.report.Wrapping = fyne.TextWrapBreak
	diagnose := widget.NewButtonWithIcon("Diagnose the pasted report", theme.SearchIcon(), c.diagnosePaste)
	pasteBox := widget.NewAccordion(widget.NewAccordionItem("Diagnose a report pasted from another machine",
		container.NewBorder(nil, container.NewHBox(diagnose), nil, nil, c.report)))
	top := container.NewVBox(title, pasteBox, c.source, c.verdict, c.progress)
	c.content = container.NewBorder(top, container.NewHBox(c.rerun, c.deepBtn, c.saveBtn), nil, nil, container.NewVScroll(c.list))
	return c
}

// diagnosePaste judges the pasted text with the same rules as this machine.
func (c *checkView) diagnosePaste() {
	text := c.report.Text
	if strings.TrimSpace(text) == "" {
		c.source.SetText("Pasted report")
		c.verdict.SetText("Paste a report into the box first.")
		c.verdict.Importance = widget.WarningImportance
		c.verdict.Refresh()
		return
	}
	paste := c.paste
	if paste == nil {
		paste = cli.PasteChecker
	}
	c.rerun.Disable()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		rep, err := paste(text)
		c.ui(func() {
			c.show(rep, err)
			c.source.SetText(fmt.Sprintf("Pasted report (%d lines)", strings.Count(text, "\n")+1))
		})
	}()
}

func (c *checkView) ui(f func()) {
	if c.do != nil {
		c.do(f)
		return
	}
	fyne.DoAndWait(f)
}

func (c *checkView) run() {
	c.runWith(c.check, "Checking the GPU, driver, CUDA and Python frameworks…", false)
}

// runDeep runs the deep check (seconds to a minute) in the background.
func (c *checkView) runDeep() {
	if c.deep == nil {
		return
	}
	c.runWith(c.deep, "Deep check: running a matmul and a convolution on each GPU through every Python with torch…", true)
}

func (c *checkView) running() bool { return c.busy }

func (c *checkView) runWith(check Checker, what string, deep bool) {
	if c.busy || check == nil {
		return
	}
	c.busy = true
	c.source.SetText("This machine")
	c.verdict.SetText(what)
	c.verdict.Importance = widget.MediumImportance
	c.verdict.Refresh()
	c.rerun.Disable()
	c.deepBtn.Disable()
	c.progress.Show()
	c.progress.Start()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		rep, err := check(c.ctx)
		c.ui(func() {
			c.busy = false
			c.deepBtn.Enable()
			c.show(rep, err)
			if deep && err == nil {
				c.source.SetText("This machine, deep check: " + deepSummary(rep))
			}
			if err == nil && c.onReport != nil {
				c.onReport(rep)
			}
		})
	}()
}

// deepSummary says what the deep check ran, or that it ran nothing (no
// Python with torch was found).
func deepSummary(rep gpu.Report) string {
	if rep.Facts == nil || len(rep.Facts.Deep) == 0 {
		return "nothing ran: no Python interpreter with PyTorch was found, so no GPU work could be tried (the findings below are the ordinary check's)."
	}
	n := 0
	for _, d := range rep.Facts.Deep {
		n += len(d.Devices)
	}
	return fmt.Sprintf("ran in %s with PyTorch, on %s; its findings are below.", plural.Count(len(rep.Facts.Deep), "Python interpreter"), plural.Count(n, "GPU"))
}

// save writes the report on screen as Markdown and JSON side by side.
func (c *checkView) save() {
	if c.last == nil || c.saveFile == nil {
		return
	}
	rep := *c.last
	c.saveFile(c.win, "gpuwizard-report.md", func(p string) {
		if p == "" {
			return
		}
		base := strings.TrimSuffix(p, filepath.Ext(p))
		var md, js bytes.Buffer
		rep.WriteMarkdown(&md)
		rep.WriteJSON(&js)
		err := os.WriteFile(base+".md", md.Bytes(), 0o644)
		if err == nil {
			err = os.WriteFile(base+".json", js.Bytes(), 0o644)
		}
		if err != nil {
			c.source.SetText("Saving the report failed: " + err.Error())
			return
		}
		c.source.SetText("Report saved to " + base + ".md and " + base + ".json")
	})
}

func (c *checkView) show(rep gpu.Report, err error) {
	c.progress.Stop()
	c.progress.Hide()
	c.rerun.Enable()
	c.list.RemoveAll()
	if err != nil {
		c.verdict.SetText("The check failed: " + err.Error())
		return
	}
	c.last = &rep
	c.verdict.SetText(rep.Verdict)
	c.verdict.Importance = widget.DangerImportance
	if rep.Ready {
		c.verdict.Importance = widget.SuccessImportance
	}
	c.verdict.Refresh()
	for _, f := range rep.Findings {
		card := findingCard(f, c.later)
		if c.fix != nil && fix.Fixable(f.ID) && f.Severity != gpu.SevInfo && f.Severity != gpu.SevOK {
			btn := widget.NewButtonWithIcon("Fix it…", theme.ConfirmIcon(), func() { c.openFix(rep) })
			btn.Importance = widget.HighImportance
			card = container.NewVBox(card, container.NewHBox(btn))
		}
		c.list.Add(card)
	}
}

// severityIcon is the coloured icon of a severity.
func severityIcon(s gpu.Severity) fyne.Resource {
	switch s {
	case gpu.SevError:
		return theme.NewErrorThemedResource(theme.ErrorIcon())
	case gpu.SevWarning:
		return theme.NewWarningThemedResource(theme.WarningIcon())
	case gpu.SevOK:
		return theme.NewSuccessThemedResource(theme.ConfirmIcon())
	}
	return theme.NewPrimaryThemedResource(theme.InfoIcon())
}

// later runs f on the UI goroutine two seconds from now.
func (c *checkView) later(f func()) {
	time.AfterFunc(2*time.Second, func() { c.ui(f) })
}

// findingCard shows one finding: its title, evidence and fix. later
// schedules the copy buttons' return from "Copied".
func findingCard(f gpu.Finding, later func(func())) fyne.CanvasObject {
	head := widget.NewLabelWithStyle(f.Title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	head.Wrapping = fyne.TextWrapWord
	body := container.NewVBox()
	if len(f.Evidence) > 0 {
		ev := widget.NewLabel(strings.Join(f.Evidence, "\n"))
		ev.Wrapping = fyne.TextWrapWord
		ev.TextStyle = fyne.TextStyle{Italic: true}
		body.Add(ev)
	}
	for _, s := range f.Fix {
		if s.Text != "" {
			l := widget.NewLabel(s.Text)
			l.Wrapping = fyne.TextWrapWord
			body.Add(l)
		}
		if s.Command != "" {
			cmd := s.Command
			entry := widget.NewLabelWithStyle(cmd, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
			entry.Wrapping = fyne.TextWrapWord // at spaces: a command is copied, so never split inside a token
			copyBtn := widget.NewButtonWithIcon("", theme.ContentCopyIcon(), nil)
			copyBtn.OnTapped = func() {
				if app := fyne.CurrentApp(); app != nil {
					app.Clipboard().SetContent(cmd)
				}
				// Say so for two seconds.
				copyBtn.SetText("Copied")
				copyBtn.SetIcon(theme.ConfirmIcon())
				later(func() {
					copyBtn.SetText("")
					copyBtn.SetIcon(theme.ContentCopyIcon())
				})
			}
			body.Add(container.NewBorder(nil, nil, nil, copyBtn, entry))
		}
	}
	icon := widget.NewIcon(severityIcon(f.Severity))
	// Errors and warnings open with their evidence and fix; the rest folds.
	toggle := widget.NewButtonWithIcon("", theme.MenuDropDownIcon(), nil)
	toggle.Importance = widget.LowImportance
	toggle.OnTapped = func() {
		if body.Visible() {
			body.Hide()
			toggle.SetIcon(theme.MenuExpandIcon())
		} else {
			body.Show()
			toggle.SetIcon(theme.MenuDropDownIcon())
		}
	}
	if f.Severity == gpu.SevInfo || f.Severity == gpu.SevOK {
		body.Hide()
		toggle.SetIcon(theme.MenuExpandIcon())
	}
	if len(body.Objects) == 0 {
		toggle.Hide()
	}
	return widget.NewCard("", "", container.NewBorder(nil, nil, container.NewVBox(icon), container.NewVBox(toggle), container.NewVBox(head, body)))
}
