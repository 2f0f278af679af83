package trainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/internal/synth"
)

// tinyDataset writes a 2-class image folder an MLP learns in a few epochs.
func tinyDataset(t testing.TB, perClass int) string {
	t.Helper()
	root := t.TempDir()
	if err := synth.LeftRight(root, perClass); err != nil {
		t.Fatal(err)
	}
	return root
}

func tinyConfig(t testing.TB, data string) Config {
	c := Defaults()
	c.Data, c.Model, c.ImageSize, c.Epochs, c.Batch, c.LR = data, "mlp", 8, 4, 16, 0.01
	c.WarmupEpochs = 0
	c.Project = filepath.Join(t.TempDir(), "runs")
	return c
}

// collect drains events into a slice until Run returns.
func collect(ctx context.Context, cfg Config, opts Options) ([]Event, *Result, error) {
	ch := make(chan Event, 1000)
	res, err := Run(ctx, cfg, ch, opts)
	close(ch)
	var evs []Event
	for e := range ch {
		evs = append(evs, e)
	}
	return evs, res, err
}

func TestDefaultsAndValidation(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("embedded defaults invalid: %v", err)
	}
	bad := map[string]func(*Config){
		"batch":      func(c *Config) { c.Batch = 0 },
		"lr":         func(c *Config) { c.LR = -0.1 },
		"image_size": func(c *Config) { c.ImageSize = 10000 },
		"epochs":     func(c *Config) { c.Epochs = 0 },
		"optimizer":  func(c *Config) { c.Optimizer = "rmsprop" },
		"device":     func(c *Config) { c.Device = "tpu" },
		"val_split":  func(c *Config) { c.ValSplit = 1 },
		"name":       func(c *Config) { c.Name = "../x" },
		"momentum":   func(c *Config) { c.Momentum = 1 },
	}
	for field, mutate := range bad {
		c := d
		mutate(&c)
		err := c.Validate()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "run.yaml")
	os.WriteFile(good, []byte("epochs: 3\nlr: 0.01\n"), 0o644)
	c, err := LoadConfigFile(good, Defaults())
	if err != nil || c.Epochs != 3 || c.LR != 0.01 || c.Batch != Defaults().Batch {
		t.Fatalf("%+v %v", c, err)
	}
	for content, want := range map[string]string{
		"epochs: 3\nbatchsize: 4\n": `line 2: "batchsize" is not a setting gpuwizard knows`,
		"epochs: lots\n":            `line 1 (epochs): "lots" is not a whole number`,
	} {
		p := filepath.Join(dir, "bad.yaml")
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := LoadConfigFile(p, Defaults()); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%q: %v (want %q and the file)", content, err, want)
		}
	}
}

func TestRunWritesEverythingAndRepeats(t *testing.T) {
	data := tinyDataset(t, 40)
	cfg := tinyConfig(t, data)
	evs, res, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if kinds[EventStart] != 1 || kinds[EventEpoch] != 4 || kinds[EventDone] != 1 || evs[len(evs)-1].Kind != EventDone {
		t.Fatalf("events: %v", kinds)
	}
	start := evs[0]
	for _, e := range evs {
		if e.Kind == EventStart {
			start = e
		}
	}
	if start.Device != "cpu" || !strings.Contains(start.DeviceReason, "not checked") {
		t.Fatalf("start event must name the device and why: %+v", start)
	}
	if res.Val == nil || res.Val.Accuracy < 0.9 {
		t.Fatalf("the MLP should learn left/right: %+v", res.Val)
	}
	for _, f := range []string{"args.yaml", "env.json", "labels.txt", "results.csv", "results.json", "last.ckpt", "best.ckpt"} {
		if _, err := os.Stat(filepath.Join(res.RunDir, f)); err != nil {
			t.Errorf("run folder lacks %s", f)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(res.RunDir, "results.csv"))
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "epoch,time,train/loss") {
		t.Fatalf("results.csv:\n%s", csv)
	}
	// Same seed, same run: the losses repeat exactly.
	_, res2, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.RunDir == res.RunDir {
		t.Fatal("a second run must not reuse the first run's folder")
	}
	for i := range res.History {
		if res.History[i].TrainLoss != res2.History[i].TrainLoss || res.History[i].ValAcc != res2.History[i].ValAcc {
			t.Fatalf("epoch %d differs between two runs with seed %d", i+1, cfg.Seed)
		}
	}
	cfg.Seed = 99
	_, res3, _ := collect(context.Background(), cfg, Options{})
	if res3.History[0].TrainLoss == res.History[0].TrainLoss {
		t.Fatal("another seed should give another run")
	}
}

func TestStopResumeAndExtend(t *testing.T) {
	data := tinyDataset(t, 40)
	cfg := tinyConfig(t, data)
	cfg.Epochs = 3
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan Event, 1000)
	var res *Result
	var err error
	go func() {
		for e := range ch {
			if e.Kind == EventEpoch && e.Epoch == 1 {
				cancel() // Ctrl-C after the first epoch
			}
		}
	}()
	res, err = Run(ctx, cfg, ch, Options{})
	close(ch)
	// The cancel races with the next epoch's few tiny steps: the run stops
	// in epoch 2 or, when the steps win, in epoch 3.
	if !errors.Is(err, ErrStopped) || res.Epochs < 1 || res.Epochs > 2 {
		t.Fatalf("stop: %v, %d epochs", err, res.Epochs)
	}
	ck, err := LoadCheckpoint(filepath.Join(res.RunDir, "last.ckpt"))
	// 72 training images in batches of 16: 5 steps an epoch; a stopped
	// epoch is redone, so the saved step is where it began.
	if err != nil || ck.Epoch != res.Epochs || ck.Finished || ck.Optim.Steps == 0 || ck.GlobalStep != 5*res.Epochs {
		t.Fatalf("last.ckpt after stop: epoch %d, step %d, finished %v, optimiser steps %d, %v", ck.Epoch, ck.GlobalStep, ck.Finished, ck.Optim.Steps, err)
	}
	_, res2, err := collect(context.Background(), Config{}, Options{Resume: res.RunDir})
	if err != nil || res2.Epochs != 3 || len(res2.History) != 3 || res2.RunDir != res.RunDir {
		t.Fatalf("resume: %v, %d epochs, %d rows", err, res2.Epochs, len(res2.History))
	}
	// A finished run resumes only with --extend.
	if _, _, err := collect(context.Background(), Config{}, Options{Resume: res.RunDir}); err == nil || !strings.Contains(err.Error(), "--extend") {
		t.Fatalf("resuming a finished run: %v", err)
	}
	_, res3, err := collect(context.Background(), Config{}, Options{Resume: res.RunDir, Extend: 2})
	if err != nil || res3.Epochs != 5 || len(res3.History) != 5 {
		t.Fatalf("extend: %v, %d epochs", err, res3.Epochs)
	}
}

func TestPauseAndResume(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 40))
	ctl := &Control{}
	ctl.Pause()
	ch := make(chan Event, 1000)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), cfg, ch, Options{Control: ctl})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a paused run finished: %v", err)
	default:
	}
	for len(ch) > 0 {
		if e := <-ch; e.Kind == EventStep {
			t.Fatal("a paused run made a step")
		}
	}
	ctl.Resume()
	go func() {
		for range ch {
		}
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// failingFS fails every write to last.ckpt as a full disk would.
type failingFS struct{ OSFileSystem }

type fullFile struct{ *os.File }

func (f fullFile) Write(p []byte) (int, error) { return 0, syscall.ENOSPC }

func (f failingFS) CreateTemp(dir, pattern string) (File, error) {
	fh, err := os.CreateTemp(dir, pattern)
	if err != nil || !strings.Contains(pattern, "last.ckpt") {
		return fh, err
	}
	return fullFile{fh}, nil
}

func TestFullDiskKeepsPreviousCheckpoint(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 40))
	_, res, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(res.RunDir, "last.ckpt"))
	_, _, err = collect(context.Background(), Config{}, Options{Resume: res.RunDir, Extend: 1, FS: failingFS{}})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "last.ckpt") || !strings.Contains(err.Error(), "previous version is kept") {
		t.Fatalf("full disk: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(res.RunDir, "last.ckpt"))
	if string(before) != string(after) {
		t.Fatal("the previous last.ckpt was damaged")
	}
	ents, _ := os.ReadDir(res.RunDir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestDeviceLadder(t *testing.T) {
	cfg := tinyConfig(t, tinyDataset(t, 10))
	cfg.Epochs = 1
	noGPU := func(context.Context) DeviceStatus {
		return DeviceStatus{Reason: "This machine has no NVIDIA GPU (gpuwizard doctor: no_nvidia_gpu)"}
	}
	cfg.Device = "cuda"
	if _, _, err := collect(context.Background(), cfg, Options{Probe: noGPU}); !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), "no_nvidia_gpu") {
		t.Fatalf("cuda without a GPU must fail with the doctor's finding: %v", err)
	}
	cfg.Device = "auto"
	evs, _, err := collect(context.Background(), cfg, Options{Probe: noGPU})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == EventStart && (e.Device != "cpu" || !strings.Contains(e.DeviceReason, "no_nvidia_gpu")) {
			t.Fatalf("auto must say it fell back and why: %+v", e)
		}
	}
}

func TestMetrics(t *testing.T) {
	a := newAccumulator(3)
	a.add([]float32{5, 0, 0}, 0) // right
	a.add([]float32{0, 5, 0}, 0) // predicted 1, true 0
	a.add([]float32{0, 5, 0}, 1) // right
	a.add([]float32{0, 0, 5}, 2) // right
	m := a.metrics("val", []string{"a", "b", "c"})
	if m.Accuracy != 0.75 || m.PerClass[0].Recall != 0.5 || m.PerClass[1].Precision != 0.5 || m.PerClass[2].F1 != 1 || m.Confusion[0][1] != 1 {
		t.Fatalf("%+v", m)
	}
	if !strings.Contains(m.Table(), "accuracy 75.00%") {
		t.Fatal(m.Table())
	}
}
