package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/cli"
	"gpuwizard/gpu"
)

func TestCheckViewShowsVerdictAndFindings(t *testing.T) {
	test.NewTempApp(t)
	rep := gpu.Report{Verdict: "Not ready: the driver is too old.", Findings: []gpu.Finding{
		{ID: "driver_too_old_for_torch", Cause: gpu.CauseDriverTooOld, Severity: gpu.SevError, Title: "The driver is too old",
			Evidence: []string{"driver 535"}, Fix: []gpu.Step{{Text: "Upgrade:", Command: "sudo ubuntu-drivers install"}}},
		{ID: "gpu_ok", Severity: gpu.SevOK, Title: "GPU 0"},
	}}
	calls := 0
	c := newCheckView(context.Background(), func(ctx context.Context) (gpu.Report, error) {
		calls++
		return rep, nil
	})
	w := test.NewTempWindow(t, c.content)
	w.Resize(fyne.NewSize(800, 600))
	c.run()
	c.wg.Wait()
	if c.verdict.Text != rep.Verdict || c.verdict.Importance != widget.DangerImportance {
		t.Fatalf("verdict %q importance %v", c.verdict.Text, c.verdict.Importance)
	}
	if len(c.list.Objects) != 2 {
		t.Fatalf("%d cards, want 2", len(c.list.Objects))
	}
	if c.rerun.Disabled() || c.progress.Visible() {
		t.Fatal("re-run must be enabled and the spinner hidden after the check")
	}
	test.Tap(c.rerun)
	c.wg.Wait()
	if calls != 2 || len(c.list.Objects) != 2 {
		t.Fatalf("re-run: %d calls, %d cards", calls, len(c.list.Objects))
	}
}

func TestCheckViewShowsFailure(t *testing.T) {
	test.NewTempApp(t)
	c := newCheckView(context.Background(), func(ctx context.Context) (gpu.Report, error) {
		return gpu.Report{}, errors.New("matrix broken")
	})
	test.NewTempWindow(t, c.content)
	c.run()
	c.wg.Wait()
	if c.verdict.Text != "The check failed: matrix broken" || len(c.list.Objects) != 0 {
		t.Fatalf("verdict %q, %d cards", c.verdict.Text, len(c.list.Objects))
	}
}

func TestCheckViewDiagnosesPastedReport(t *testing.T) {
	test.NewTempApp(t)
	c := newCheckView(context.Background(), func(ctx context.Context) (gpu.Report, error) { return gpu.Report{}, nil })
	c.paste = cli.PasteChecker
	test.NewTempWindow(t, c.content)
	test.Tap(c.report) // focus
	c.report.SetText("Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cpu\nValueError: Invalid CUDA 'device=0' requested.")
	c.diagnosePaste()
	c.wg.Wait()
	if !strings.HasPrefix(c.verdict.Text, "Diagnosis: torch 2.1.0+cpu") || !strings.HasPrefix(c.source.Text, "Pasted report") {
		t.Fatalf("verdict %q source %q", c.verdict.Text, c.source.Text)
	}
	if len(c.list.Objects) == 0 {
		t.Fatal("no findings shown")
	}
	c.report.SetText("   ")
	c.diagnosePaste()
	if c.verdict.Text != "Paste a report into the box first." {
		t.Fatalf("empty paste: %q", c.verdict.Text)
	}
}

// TestCopyButtonSaysCopied: a fix's copy button copies the command and
// says so.
func TestCopyButtonSaysCopied(t *testing.T) {
	a := test.NewTempApp(t)
	var restore func()
	card := findingCard(gpu.Finding{ID: "x", Severity: gpu.SevError, Title: "T", Fix: []gpu.Step{{Command: "sudo reboot"}}}, func(f func()) { restore = f })
	test.NewTempWindow(t, card)
	var btn *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Button:
			if w.Icon != nil && w.Icon.Name() == theme.ContentCopyIcon().Name() {
				btn = w
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		case *widget.Card:
			walk(w.Content)
		}
	}
	walk(card)
	if btn == nil {
		t.Fatal("no copy button")
	}
	test.Tap(btn)
	if got := a.Clipboard().Content(); got != "sudo reboot" || btn.Text != "Copied" || restore == nil {
		t.Fatalf("clipboard %q, button %q", got, btn.Text)
	}
	restore()
	if btn.Text != "" {
		t.Fatalf("after a while the button says %q", btn.Text)
	}
}

// TestDeepCheckSaysWhenNothingRan: without a Python with torch the deep
// check says it ran nothing.
func TestDeepCheckSaysWhenNothingRan(t *testing.T) {
	test.NewTempApp(t)
	c := newCheckView(context.Background(), func(ctx context.Context) (gpu.Report, error) { return gpu.Report{}, nil })
	c.deep = func(ctx context.Context) (gpu.Report, error) {
		return gpu.Report{Verdict: "Not ready", Facts: &gpu.Facts{}}, nil
	}
	test.NewTempWindow(t, c.content)
	c.runDeep()
	c.wg.Wait()
	if !strings.Contains(c.source.Text, "nothing ran") {
		t.Fatalf("source %q", c.source.Text)
	}
}
