package trainer

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer/data"
)

// stoppedRun trains cfg and stops it after its first epoch (the stop may
// land in epoch 2 or 3: see TestStopResumeAndExtend).
func stoppedRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan Event, 1000)
	go func() {
		for e := range ch {
			if e.Kind == EventEpoch && e.Epoch == 1 {
				cancel()
			}
		}
	}()
	res, err := Run(ctx, cfg, ch, Options{})
	close(ch)
	if !errors.Is(err, ErrStopped) || res == nil || res.Epochs < 1 || res.Epochs >= cfg.Epochs {
		t.Fatalf("stop: %v", err)
	}
	return res
}

func TestRunsListResultsExportDelete(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 40))
	cfg.Epochs = 2
	cfg.Name = "done"
	evs, fin, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Epochs, cfg.Name = 4, "halted"
	stopped := stoppedRun(t, cfg)

	runs, err := ListRuns(cfg.Project)
	if err != nil || len(runs) != 2 {
		t.Fatalf("ListRuns: %d runs, %v", len(runs), err)
	}
	if runs[0].Name != "halted" || runs[1].Name != "done" {
		t.Errorf("newest first: %s, %s", runs[0].Name, runs[1].Name)
	}
	done, halted := runs[1], runs[0]
	if done.State != RunFinished || done.Status != "finished 2 epochs" || done.Model != "mlp" || done.Device != "cpu" || done.BestAcc < 0 || done.CanResume || !done.CanExtend {
		t.Errorf("finished run: %+v", done)
	}
	want := "stopped at epoch " + string(rune('0'+stopped.Epochs)) + " of 4"
	if halted.State != RunStopped || halted.Status != want || !halted.CanResume || halted.Epoch != stopped.Epochs {
		t.Errorf("stopped run: %+v, want %q", halted, want)
	}
	checkCurvesAndResults(t, evs, fin, stopped)
	checkExport(t, fin, stopped)
	checkRunningAndDelete(t, cfg.Project, fin, stopped)
}

// checkCurvesAndResults: the steps are smoothed, in epochs, and recorded;
// a finished run's results are its results.json, a stopped run's its
// best checkpoint evaluated once.
func checkCurvesAndResults(t *testing.T, evs []Event, fin, stopped *Result) {
	t.Helper()
	var last float64
	steps := 0
	for _, e := range evs {
		if e.Kind == EventStep {
			steps++
			if e.X <= last || e.SmoothLoss <= 0 || e.X > 2 {
				t.Fatalf("step event x %v after %v, smooth loss %v", e.X, last, e.SmoothLoss)
			}
			last = e.X
		}
	}
	pts := readSteps(filepath.Join(fin.RunDir, StepsFile), math.Inf(1))
	saved, err := readResult(filepath.Join(fin.RunDir, ResultsFile))
	if err != nil || len(saved.History) != 2 || len(pts) < 2 || pts[len(pts)-1].X != 2 {
		t.Fatalf("history: %d points (last %+v), %v", len(pts), pts, err)
	}

	// A finished run's results are its results.json.
	r1, err := RunResults(context.Background(), fin.RunDir)
	if err != nil || r1.Val == nil || r1.Stopped != "" {
		t.Fatalf("finished results: %+v, %v", r1, err)
	}
	// A stopped run's results: its best checkpoint, evaluated once.
	r2, err := RunResults(context.Background(), stopped.RunDir)
	if err != nil || r2.Val == nil || len(r2.Val.Confusion) != 2 || !strings.Contains(r2.Stopped, "best checkpoint") {
		t.Fatalf("stopped results: %+v, %v", r2, err)
	}
	cache := filepath.Join(stopped.RunDir, BestResultsFile)
	st1, err := os.Stat(cache)
	if err != nil {
		t.Fatalf("no cache: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	r3, err := RunResults(context.Background(), stopped.RunDir)
	if st2, _ := os.Stat(cache); err != nil || !st2.ModTime().Equal(st1.ModTime()) || r3.Val.Accuracy != r2.Val.Accuracy {
		t.Fatalf("the second call must use the cache: %v", err)
	}
}

// checkExport: an export is complete, without the lock; a second export to
// the same place is refused and leaves nothing behind.
func checkExport(t *testing.T, fin, stopped *Result) {
	t.Helper()
	// Export: complete, without the lock; a second export to the same
	// place is refused and leaves nothing behind.
	dest := filepath.Join(t.TempDir(), "exported")
	if err := ExportRun(context.Background(), stopped.RunDir, dest); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"best.ckpt", "last.ckpt", "args.yaml", BestResultsFile, StepsFile, StateFile} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("export lacks %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, LockFile)); err == nil {
		t.Error("export copied the lock file")
	}
	if err := ExportRun(context.Background(), stopped.RunDir, dest); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("export over an existing folder: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".exported.export-*")); len(left) != 0 {
		t.Errorf("temporary folders left: %v", left)
	}
	// A cancelled export leaves nothing either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dest2 := filepath.Join(filepath.Dir(dest), "cancelled")
	if err := ExportRun(ctx, fin.RunDir, dest2); err == nil {
		t.Error("a cancelled export succeeded")
	}
	if left, _ := os.ReadDir(filepath.Dir(dest)); len(left) != 1 {
		t.Errorf("after a cancelled export the folder holds %d entries", len(left))
	}
}

// checkRunningAndDelete: a run someone trains in is "running" and cannot
// be deleted; one killed while running is "crashed"; a folder that is not
// a run is neither listed nor deleted.
func checkRunningAndDelete(t *testing.T, project string, fin, stopped *Result) {
	t.Helper()
	// A run someone trains in is "running" and cannot be deleted.
	lock, err := lockRunDir(fin.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if ri, _ := ReadRun(fin.RunDir); ri.State != RunRunning || !strings.Contains(ri.Status, "PID") {
		t.Errorf("locked run: %+v", ri)
	}
	if err := DeleteRun(fin.RunDir); !errors.Is(err, ErrRunInUse) {
		t.Errorf("deleting a running run: %v", err)
	}
	lock.release()
	// Killed while running: state.json says running, nobody holds the lock.
	os.WriteFile(filepath.Join(stopped.RunDir, StateFile), []byte(`{"state":"running","epoch":1,"epochs":4}`), 0o644)
	if ri, _ := ReadRun(stopped.RunDir); ri.State != RunCrashed || !ri.CanResume || ri.Status != "crashed at epoch 1 of 4" {
		t.Errorf("crashed run: %+v", ri)
	}
	// Not a run folder: neither listed nor deleted.
	other := filepath.Join(project, "photos")
	os.MkdirAll(other, 0o755)
	if err := DeleteRun(other); !errors.Is(err, ErrNotRun) {
		t.Errorf("deleting a folder that is not a run: %v", err)
	}
	if err := DeleteRun(fin.RunDir); err != nil {
		t.Fatal(err)
	}
	if runs, _ := ListRuns(project); len(runs) != 1 || runs[0].Name != "halted" {
		t.Errorf("after delete: %+v", runs)
	}
	if runs, err := ListRuns(filepath.Join(t.TempDir(), "none")); err != nil || runs != nil {
		t.Errorf("missing project: %v %v", runs, err)
	}
}

func TestResumeKeepsHistoryAndExtendContinuesTheRate(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 40))
	cfg.Epochs = 3
	res := stoppedRun(t, cfg)
	evs, res2, err := collect(context.Background(), Config{}, Options{Resume: res.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	var start *Event
	for i := range evs {
		if evs[i].Kind == EventStart {
			start = &evs[i]
		}
	}
	if start == nil || len(start.History) != res.Epochs || len(start.StepHistory) == 0 || start.StepHistory[len(start.StepHistory)-1].X != float64(res.Epochs) {
		t.Fatalf("resume start event lacks the history: %+v", start)
	}
	lastLR := res2.History[len(res2.History)-1].LR
	evs, res3, err := collect(context.Background(), Config{}, Options{Resume: res.RunDir, Extend: 2})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, e := range evs {
		if e.Kind == EventLog && strings.Contains(e.Message, "continues from") {
			said = true
		}
		if e.Kind == EventStep && e.LR > lastLR*1.0001 {
			t.Fatalf("train more epochs: rate %g above the finished run's %g", e.LR, lastLR)
		}
	}
	if !said || len(res3.History) != 5 {
		t.Fatalf("extend: said %v, %d epochs", said, len(res3.History))
	}
	if h := res3.History; !(h[4].LR < h[3].LR) {
		t.Errorf("the continued rate must decay: %g then %g", h[3].LR, h[4].LR)
	}
	ck, err := LoadCheckpoint(filepath.Join(res.RunDir, "last.ckpt"))
	if err != nil || ck.Config.ExtendFrom != 3 || ck.Config.ExtendLR != lastLR {
		t.Fatalf("the continuation must be recorded for later resumes: %+v, %v", ck.Config, err)
	}
	pts := readSteps(filepath.Join(res.RunDir, StepsFile), math.Inf(1))
	if len(pts) == 0 || pts[len(pts)-1].X != 5 {
		t.Errorf("steps after extend end at %v", pts)
	}
}

func TestAutoSizeAndModel(t *testing.T) {
	root := t.TempDir()
	for c, name := range []string{"a", "b"} {
		for i := 0; i < 6; i++ {
			img := image.NewGray(image.Rect(0, 0, 28, 28))
			img.SetGray(i, c*10, color.Gray{255})
			if err := synth.WritePNG(filepath.Join(root, name, string(rune('a'+i))+".png"), img); err != nil {
				t.Fatal(err)
			}
		}
	}
	ds, err := data.Load(root, data.Options{ValSplit: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Height != 28 || !strings.Contains(ds.SizeNote, "28x28") {
		t.Fatalf("28x28 folder loads as %dx%d (%s)", ds.Width, ds.Height, ds.SizeNote)
	}
	cfg := Defaults()
	if kind, why := AutoModel(cfg, ds); kind != "lenet" || !strings.Contains(why, "28×28 grey") {
		t.Errorf("auto picks %s: %s", kind, why)
	}
	// Mixed sizes: 32.
	if err := synth.WritePNG(filepath.Join(root, "a", "big.png"), image.NewGray(image.Rect(0, 0, 40, 40))); err != nil {
		t.Fatal(err)
	}
	ds, err = data.Load(root, data.Options{ValSplit: 0.2, Seed: 1})
	if err != nil || ds.Height != 32 || !strings.Contains(ds.SizeNote, "differ") {
		t.Fatalf("mixed sizes: %v %d %s", err, ds.Height, ds.SizeNote)
	}
	if kind, why := AutoModel(cfg, ds); kind != "cnn" || !strings.Contains(why, "32×32") {
		t.Errorf("auto on 32x32 picks %s: %s", kind, why)
	}
	cfg.Model = "mlp"
	if kind, _ := AutoModel(cfg, ds); kind != "mlp" {
		t.Errorf("an explicit model must be kept: %s", kind)
	}
	e, err := EstimateEpochOn(context.Background(), Defaults(), ds, Options{Probe: func(context.Context) DeviceStatus { return DeviceStatus{Reason: "no GPU"} }})
	if err != nil || e.Device != "cpu" || e.PerEpoch <= 0 || !strings.Contains(e.Reason, "no GPU") {
		t.Errorf("estimate: %+v %v", e, err)
	}
}
