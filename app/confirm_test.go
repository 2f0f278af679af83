package app

// Issue 19, 8: what the window confirms, and what it asks before deleting.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/trainer"
)

// Issue 19, 8: saving the settings says where they went.
func TestSaveSettingsSaysWhere(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "my run.yaml")
	wz, loop := newTestWizard(t, Deps{SaveFile: func(_ fyne.Window, _ string, done func(string)) { done(p) }})
	loop.do(func() {
		wz.show(2)
		wz.settings.entries["epochs"].SetText("12")
		wz.settings.saveYAML()
		if !strings.Contains(wz.status.Text, "Settings saved to "+p) || wz.status.Importance != widget.SuccessImportance {
			t.Errorf("status %q (importance %v)", wz.status.Text, wz.status.Importance)
		}
	})
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), "epochs: 12") {
		t.Fatalf("saved %q %v", b, err)
	}
	loop.do(func() {
		p = filepath.Join(dir, "no such folder", "run.yaml")
		wz.settings.saveYAML()
		if !strings.Contains(wz.status.Text, "not saved") || wz.status.Importance != widget.DangerImportance {
			t.Errorf("a failed save says %q (importance %v)", wz.status.Text, wz.status.Importance)
		}
	})
}

// Issue 19, 8: the Delete dialog's highlighted, focused button is Cancel;
// Delete is the danger colour.
func TestDeleteDialogDefaultsToCancel(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(800, 600))
	var answers []bool
	c := confirmDestructive(w, "Delete this run?", "Delete /tmp/runs/train with its checkpoints?", "Delete", func(ok bool) { answers = append(answers, ok) })
	if c.cancel.Importance != widget.HighImportance || c.action.Importance != widget.DangerImportance || c.action.Text != "Delete" {
		t.Errorf("Cancel importance %v, %q importance %v", c.cancel.Importance, c.action.Text, c.action.Importance)
	}
	if w.Canvas().Focused() != c.cancel {
		t.Errorf("focused: %v, want Cancel", w.Canvas().Focused())
	}
	assertImage(t, "delete-dialog.png", w.Canvas().Capture())
	c.cancel.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace}) // Space on the focused button
	test.Tap(c.action)                                     // the dialog is gone: no second answer
	if !slices.Equal(answers, []bool{false}) {
		t.Errorf("answers %v, want one false", answers)
	}
	d := confirmDestructive(w, "Delete this run?", "…", "Delete", func(ok bool) { answers = append(answers, ok) })
	test.Tap(d.action)
	if !slices.Equal(answers, []bool{false, true}) {
		t.Errorf("answers %v, want false then true", answers)
	}
}

// Issue 22: the Export dialog offers the model as an ONNX file (chosen
// first) or the run folder copied as before.
func TestExportDialogOffersONNXAndFolder(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(800, 600))
	var got []string
	d, choice := chooseExportFormat(w, func(f string) { got = append(got, f) })
	if len(choice.Options) != 2 || !strings.HasPrefix(choice.Selected, "ONNX file") {
		t.Fatalf("choices %q, selected %q", choice.Options, choice.Selected)
	}
	d.Confirm()
	d, choice = chooseExportFormat(w, func(f string) { got = append(got, f) })
	choice.SetSelected(choice.Options[1])
	d.Confirm()
	d, _ = chooseExportFormat(w, func(f string) { got = append(got, f) })
	d.Dismiss()
	if !slices.Equal(got, []string{trainer.ExportONNXFormat, trainer.ExportFolder, ""}) {
		t.Fatalf("answers %q", got)
	}
}
