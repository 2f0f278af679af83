package app

import (
	"context"
	"errors"
	"fmt"
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

// stopAfterFirstEpoch is the real trainer, stopped (as Stop does) once
// the first epoch is done.
func stopAfterFirstEpoch(ctx context.Context, cfg trainer.Config, events chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Unbuffered: the trainer's epoch event is handed over (epoch events are
	// never dropped) and the stop follows it at once. With a buffer, a
	// loaded machine let the trainer run on through epoch 2 before the
	// relay read epoch 1's event, and the run stopped at epoch 2.
	mid := make(chan trainer.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range mid {
			if ev.Kind == trainer.EventEpoch && ev.Epoch == 1 {
				cancel()
			}
			events <- ev
		}
	}()
	res, err := trainer.Run(ctx, cfg, mid, opts)
	close(mid)
	<-done
	return res, err
}

// TestStoppedRunReopens: a run stopped after its first epoch shows results
// from its best checkpoint, is listed in Runs as stopped, resumes with its
// history on the charts, exports atomically through a save dialog (a
// second export into the same name fails and leaves nothing behind), and is
// deleted after a confirmation.
func TestStoppedRunReopens(t *testing.T) {
	root := t.TempDir()
	ds := filepath.Join(root, "fashion")
	writeLongDataset(t, ds, 8)
	exports := filepath.Join(root, "exports")
	if err := os.Mkdir(exports, 0o755); err != nil {
		t.Fatal(err)
	}
	confirm, exportONNX := true, false
	var asked string
	train := stopAfterFirstEpoch
	wz, loop := newTestWizard(t, Deps{
		Train: func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
			return train(ctx, cfg, ev, opts)
		},
		ExportTo: func(_ fyne.Window, name string, done func(string, string)) {
			if exportONNX {
				done(filepath.Join(exports, name+".onnx"), trainer.ExportONNXFormat)
				return
			}
			done(filepath.Join(exports, name+"-model"), trainer.ExportFolder)
		},
		Confirm: func(_ fyne.Window, title, msg, action string, done func(bool)) {
			asked = title + " " + action
			done(confirm)
		},
	})
	ui := loop.do
	ui(func() {
		wz.cfg.Project = filepath.Join(root, "runs")
		wz.dataView.load(ds)
	})
	wz.wg.Wait()
	ui(func() {
		wz.show(2)
		wz.settings.model.SetSelected("mlp")
		wz.settings.entries["epochs"].SetText("3")
		wz.settings.entries["batch"].SetText("16")
		test.Tap(wz.next)
	})
	wz.wg.Wait()
	if wz.cur != 3 {
		t.Fatalf("settings: %q", wz.status.Text)
	}
	ui(func() { test.Tap(wz.train.start) })
	wz.wg.Wait()
	if wz.result == nil || wz.result.Stopped == "" {
		t.Fatalf("not stopped: %+v (%s)", wz.result, wz.train.where.Text)
	}
	// The stop follows epoch 1's event, but the trainer may finish epoch 2
	// (five steps of 16 images) before the relay's cancel lands on a
	// loaded machine: what follows holds for the epoch it stopped at.
	stoppedAt := wz.result.Epochs
	if stoppedAt < 1 || stoppedAt > 2 {
		t.Fatalf("stopped after %d epochs of 3, want 1 (or 2)", stoppedAt)
	}
	dir := wz.result.RunDir
	ui(func() { test.Tap(wz.next) })
	wz.wg.Wait()
	wz.wg.Wait()
	ui(func() {
		if !strings.Contains(wz.results.summary.Text, "Accuracy on the validation images") || len(wz.results.table.Objects) == 0 {
			t.Errorf("a stopped run's results: %q", wz.results.summary.Text)
		}
		if wz.results.resumeBtn.Disabled() || wz.results.exportBtn.Disabled() {
			t.Error("a stopped run can be resumed and exported")
		}
	})

	// Runs lists it as stopped at that epoch.
	ui(wz.showRuns)
	wz.wg.Wait()
	ui(func() {
		if len(wz.runs.runs) != 1 || wz.runs.runs[0].State != trainer.RunStopped || !strings.Contains(wz.runs.runs[0].Status, fmt.Sprintf("stopped at epoch %d of 3", stoppedAt)) {
			t.Fatalf("runs: %+v", wz.runs.runs)
		}
		wz.runs.table.Select(widget.TableCellID{Row: 0, Col: 1})
		test.Tap(wz.runs.buttons["export"])
	})
	wz.wg.Wait()
	dest := filepath.Join(exports, filepath.Base(dir)+"-model")
	for _, f := range []string{"best.ckpt", "labels.txt", "args.yaml"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("export: %v", err)
		}
	}
	ui(func() { test.Tap(wz.runs.buttons["export"]) })
	wz.wg.Wait()
	ents, _ := os.ReadDir(exports)
	if len(ents) != 1 || !strings.Contains(wz.runs.note.Text, "already exists") {
		t.Errorf("second export: %d entries in the folder, note %q", len(ents), wz.runs.note.Text)
	}
	// The other choice of the dialog: the model as an ONNX file.
	exportONNX = true
	ui(func() { test.Tap(wz.runs.buttons["export"]) })
	wz.wg.Wait()
	if st, err := os.Stat(filepath.Join(exports, filepath.Base(dir)+".onnx")); err != nil || st.Size() == 0 || !strings.Contains(wz.runs.note.Text, "an ONNX file") {
		t.Errorf("ONNX export: %v, note %q", err, wz.runs.note.Text)
	}

	// Resume: the charts start with the epoch trained before.
	train = trainer.Run
	ui(func() { test.Tap(wz.runs.buttons["resume"]) })
	wz.wg.Wait()
	ui(func() {
		if wz.cur != 3 || wz.result == nil || wz.result.Stopped != "" || wz.result.Epochs != 3 {
			t.Fatalf("resumed: cur %d result %+v", wz.cur, wz.result)
		}
		if wz.train.acc.Len(1) != 3 || wz.train.loss.Len(0) == 0 {
			t.Errorf("history: %d validation points (want 3: one before the resume)", wz.train.acc.Len(1))
		}
		if !strings.Contains(wz.train.log.Text, fmt.Sprintf("continue from the %d epoch", stoppedAt)) {
			t.Errorf("log: %q", wz.train.log.Text)
		}
	})

	// Delete asks first; No keeps the run.
	confirm = false
	ui(func() {
		wz.showRuns()
	})
	wz.wg.Wait()
	ui(func() {
		wz.runs.table.Select(widget.TableCellID{Row: 0, Col: 0})
		test.Tap(wz.runs.buttons["delete"])
	})
	if _, err := os.Stat(dir); err != nil || asked == "" {
		t.Fatalf("declined delete: %v (asked %q)", err, asked)
	}
	confirm = true
	ui(func() { test.Tap(wz.runs.buttons["delete"]) })
	wz.wg.Wait()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted run still there: %v", err)
	}
	ui(func() {
		if len(wz.runs.runs) != 0 {
			t.Errorf("runs after delete: %d", len(wz.runs.runs))
		}
	})
}

// TestOpenFolderFailureShowsPath: without a file manager the path is
// shown with a copy button instead of nothing happening.
func TestOpenFolderFailureShowsPath(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{OpenFolder: func(string) error { return errors.New("xdg-open is not installed") }})
	dir := filepath.Join(t.TempDir(), "some run")
	loop.do(func() { wz.openFolder(dir) })
	wz.wg.Wait()
	loop.do(func() {
		if wz.lastPathDialog != dir {
			t.Errorf("no path offered: %q", wz.lastPathDialog)
		}
	})
}

// Issue 19, 10: the Runs view lists the runs `gpuwizard train` made in
// other folders (from the run index), with their folder; a damaged index
// still lists the project's runs and says what is wrong.
func TestRunsViewListsIndexedRuns(t *testing.T) {
	root := t.TempDir()
	index := filepath.Join(root, "config", "gpuwizard", trainer.RunIndexFile)
	project := filepath.Join(root, "home", "gpuwizard", "runs")
	mkRun := func(dir string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "args.yaml"), trainer.Defaults().YAML(), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	own := mkRun(filepath.Join(project, "train"))
	cli := mkRun(filepath.Join(root, "work", "yolo", "runs", "train"))
	for _, d := range []string{own, cli} {
		if err := trainer.RecordRun(index, d); err != nil {
			t.Fatal(err)
		}
	}
	wz, loop := newTestWizard(t, Deps{RunIndex: index})
	list := func() (dirs []string) {
		loop.do(func() {
			wz.cfg.Project = project
			if wz.inRuns {
				wz.runs.reload() // Refresh
			} else {
				wz.showRuns()
			}
		})
		wz.wg.Wait()
		loop.do(func() {
			for _, r := range wz.runs.runs {
				dirs = append(dirs, r.Dir)
			}
		})
		return dirs
	}
	dirs := list()
	want := []string{own, cli}
	slices.Sort(dirs)
	slices.Sort(want)
	if !slices.Equal(dirs, want) {
		t.Fatalf("runs %q, want %q, each once", dirs, want)
	}
	loop.do(func() {
		for _, r := range wz.runs.runs {
			if c := runCell(r, 1); r.Dir == cli && (!strings.HasPrefix(c, "…"+string(filepath.Separator)) || !strings.HasSuffix(c, filepath.FromSlash("/work/yolo/runs")) || len([]rune(c)) > 26) {
				t.Errorf("folder cell %q, want the end of %q", c, filepath.Dir(cli))
			}
		}
	})
	if err := os.WriteFile(index, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dirs := list(); !slices.Equal(dirs, []string{own}) {
		t.Errorf("with a damaged index: %q, want the project's run", dirs)
	}
	loop.do(func() {
		if !strings.Contains(wz.runs.note.Text, "not listed") || !strings.Contains(wz.runs.note.Text, index) {
			t.Errorf("note %q: want it to name the index", wz.runs.note.Text)
		}
	})
}
