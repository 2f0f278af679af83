// Package app is the Fyne wizard. It is the only package that imports Fyne.
package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	_ "gpuwizard/app/internal/localefix" // before Fyne reads the locale
	"gpuwizard/assets"
	"gpuwizard/gpu"
)

// Checker runs the doctor; tests pass a fake.
type Checker func(ctx context.Context) (gpu.Report, error)

// PasteChecker diagnoses a report pasted from another machine.
func PasteChecker(text string) (gpu.Report, error) {
	m, err := gpu.LoadMatrix()
	if err != nil {
		return gpu.Report{}, fmt.Errorf("loading the compatibility matrix: %w", err)
	}
	return gpu.Diagnose(gpu.ParsePaste(text, time.Now()), m), nil
}

// LiveChecker probes this machine and judges it.
func LiveChecker(ctx context.Context) (gpu.Report, error) {
	m, err := gpu.LoadMatrix()
	if err != nil {
		return gpu.Report{}, fmt.Errorf("loading the compatibility matrix: %w", err)
	}
	return gpu.Diagnose(gpu.Probe(ctx, gpu.Options{}), m), nil
}

// Run opens the main window and blocks until it is closed.
func Run(ctx context.Context) error {
	a := fyneapp.NewWithID("io.gpuwizard.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("gpuwizard")
	c := newCheckView(ctx, LiveChecker)
	c.paste = PasteChecker
	w.SetContent(c.content)
	w.Resize(fyne.NewSize(960, 640))
	c.run()
	w.ShowAndRun()
	return nil
}

// checkView shows the doctor's verdict and findings. The check runs in a
// goroutine; widgets change only through fyne.Do.
type checkView struct {
	ctx      context.Context
	check    Checker
	paste    func(text string) (gpu.Report, error)
	report   *widget.Entry // a report pasted from another machine
	source   *widget.Label // what the findings below are about
	verdict  *widget.Label
	progress *widget.ProgressBarInfinite
	list     *fyne.Container
	rerun    *widget.Button
	content  fyne.CanvasObject
	wg       sync.WaitGroup // the running check, for tests
}

func newCheckView(ctx context.Context, check Checker) *checkView {
	c := &checkView{ctx: ctx, check: check}
	title := widget.NewLabelWithStyle("Is this machine ready to train on its NVIDIA GPU?", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict = widget.NewLabelWithStyle("Checking the GPU, driver, CUDA and Python frameworks…", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict.Wrapping = fyne.TextWrapWord
	c.progress = widget.NewProgressBarInfinite()
	c.list = container.NewVBox()
	c.rerun = widget.NewButtonWithIcon("Check this machine again", theme.ViewRefreshIcon(), c.run)
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
	c.content = container.NewBorder(top, container.NewHBox(c.rerun), nil, nil, container.NewVScroll(c.list))
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
		paste = PasteChecker
	}
	c.rerun.Disable()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		rep, err := paste(text)
		fyne.DoAndWait(func() {
			c.show(rep, err)
			c.source.SetText(fmt.Sprintf("Pasted report (%d lines)", strings.Count(text, "\n")+1))
		})
	}()
}

func (c *checkView) run() {
	c.source.SetText("This machine")
	c.rerun.Disable()
	c.progress.Show()
	c.progress.Start()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		rep, err := c.check(c.ctx)
		fyne.DoAndWait(func() { c.show(rep, err) })
	}()
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
	c.verdict.SetText(rep.Verdict)
	c.verdict.Importance = widget.DangerImportance
	if rep.Ready {
		c.verdict.Importance = widget.SuccessImportance
	}
	c.verdict.Refresh()
	for _, f := range rep.Findings {
		c.list.Add(findingCard(f))
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

// findingCard shows one finding: its title, evidence and fix.
func findingCard(f gpu.Finding) fyne.CanvasObject {
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
			entry.Wrapping = fyne.TextWrapBreak
			copyBtn := widget.NewButtonWithIcon("", theme.ContentCopyIcon(), func() {
				if app := fyne.CurrentApp(); app != nil {
					app.Clipboard().SetContent(cmd)
				}
			})
			body.Add(container.NewBorder(nil, nil, nil, copyBtn, entry))
		}
	}
	icon := widget.NewIcon(severityIcon(f.Severity))
	return widget.NewCard("", "", container.NewBorder(nil, nil, container.NewVBox(icon), nil, container.NewVBox(head, body)))
}
