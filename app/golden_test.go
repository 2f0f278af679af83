package app

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu/nvml/nvmlfake"

	"gpuwizard/cli"
	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"
	"gpuwizard/trainer"
	"gpuwizard/trainer/exec"
)

// goldenRoot is where the golden walk keeps its dataset and runs: a fixed
// path, because the window shows it.
const goldenRoot = "/tmp/gpuwizard-golden"

// lockGoldenRoot makes goldenRoot for this test alone: another test binary
// (another checkout's) may be using it; one older than 5 minutes is stale.
func lockGoldenRoot(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := os.Mkdir(goldenRoot, 0o755)
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(goldenRoot) })
			return
		}
		if !os.IsExist(err) {
			t.Skipf("no %s: %v", goldenRoot, err)
		}
		if st, err := os.Stat(goldenRoot); err == nil && time.Since(st.ModTime()) > 5*time.Minute {
			os.RemoveAll(goldenRoot)
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stays in use", goldenRoot)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writeLongDataset writes 10 class folders with tools/mkdataset's long
// names, each with n 28×28 grey images (stripes and blobs).
func writeLongDataset(t *testing.T, dir string, n int) {
	t.Helper()
	for c, name := range longClasses {
		cd := filepath.Join(dir, name)
		if err := os.MkdirAll(cd, 0o755); err != nil {
			t.Fatal(err)
		}
		for k := range n {
			img := image.NewGray(image.Rect(0, 0, 28, 28))
			for y := range 28 {
				for x := range 28 {
					v := 128 + 120*math.Sin(float64(x*(c+1))/5+float64(y*(k%3+1))/7)
					img.SetGray(x, y, color.Gray{Y: uint8(v)})
				}
			}
			f, err := os.Create(filepath.Join(cd, fmt.Sprintf("%03d.png", k)))
			if err != nil {
				t.Fatal(err)
			}
			png.Encode(f, img)
			f.Close()
		}
	}
}

// dgxReport is the doctor's report on a DGX A100: nvmlfake's copy of go-nvml's mock, 8 A100s.
func dgxReport(t *testing.T) gpu.Report {
	t.Helper()
	root, err := filepath.Abs("testdata/dgxa100-root")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cli.Check(context.Background(), probe.Options{Root: root, Environ: map[string]string{}, NVML: nvmlfake.DGXA100(), Runner: noCommands{},
		GOOS: "linux", GOARCH: "amd64", Home: "/home/ada", Cwd: "/", Now: func() time.Time { return time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// fakeCUDA is the Go backend posing as CUDA device 0, for the estimate.
type fakeCUDA struct{ *exec.GoBackend }

func (fakeCUDA) Name() string { return "cuda:0" }

func fakeGPU(int) (exec.Backend, exec.CUDAInfo, error) {
	return fakeCUDA{exec.NewGoBackend()}, exec.CUDAInfo{Name: "NVIDIA A100-SXM4-40GB"}, nil
}

// scriptedTrain replays a 3-epoch run of 40 steps an epoch on device.
func scriptedTrain(runDir, device string) func(context.Context, trainer.Config, chan<- trainer.Event, trainer.Options) (*trainer.Result, error) {
	return func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
		reason := "no usable GPU: This machine has no NVIDIA GPU (gpuwizard doctor: no_nvidia_gpu)"
		if device != "cpu" {
			reason = "auto: NVIDIA A100-SXM4-40GB, NVIDIA driver 550.54.15"
		}
		ev <- trainer.Event{Kind: trainer.EventStart, Device: device, DeviceReason: reason, Epochs: 3, Steps: 40, RunDir: runDir,
			Message: "Training lenet (auto: 28×28 grey images) on 600 images of 28×28 in 10 classes"}
		t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		for e := 1; e <= 3; e++ {
			for s := 1; s <= 40; s++ {
				x := float64(e-1) + float64(s)/40
				step := trainer.Event{Kind: trainer.EventStep, Epoch: e, Epochs: 3, Step: s, Steps: 40, X: x,
					Loss: 2.3 / (1 + float64(s)/10), Accuracy: 0.5, SmoothLoss: 0.35 + 1.9*math.Exp(-2*x), SmoothAccuracy: 0.9 - 0.8*math.Exp(-2.5*x),
					LR: 0.001 * (1 + math.Cos(math.Pi*x/3)) / 2, ImagesPerSec: 2400 + 100*math.Sin(x*7), ETA: time.Duration((3-x)*20) * time.Second}
				if device != "cpu" {
					step.GPU = &trainer.GPUSample{Time: t0.Add(time.Duration(x*20) * time.Second), Utilization: 70 + int(20*math.Sin(x*5)),
						MemoryUsedMiB: 1800 + int(100*x), ProcessListed: true, ProcessMiB: 1200 + int(50*x), TemperatureC: 45 + int(6*x)}
				}
				ev <- step
			}
			ev <- trainer.Event{Kind: trainer.EventEpoch, Epoch: e, Epochs: 3, Loss: 0.4, Accuracy: 0.85,
				ValLoss: 0.3 + 0.6/float64(e), ValAccuracy: 0.9 - 0.2/float64(e), Best: true}
		}
		res := longResult(runDir)
		res.Device = device
		ev <- trainer.Event{Kind: trainer.EventDone, Message: "finished"}
		return res, nil
	}
}

// goldenRuns is a runs folder with one run in each state.
func goldenRuns(project string) ([]trainer.RunInfo, error) {
	at := func(h int) time.Time { return time.Date(2026, 11, 24, h, 30, 0, 0, time.Local) }
	data := filepath.Join(goldenRoot, "fashion")
	return []trainer.RunInfo{
		{Dir: filepath.Join(project, "train4"), Name: "train4", State: trainer.RunRunning, Status: "running (PID 4242)", Epoch: 1, Epochs: 10, Data: data, Model: "cnn", Device: "cuda:0", BestAcc: 0.71, BestEpoch: 1, Updated: at(17)},
		{Dir: filepath.Join(project, "train3"), Name: "train3", State: trainer.RunStopped, Status: "stopped at epoch 3 of 10", Epoch: 3, Epochs: 10, Data: data, Model: "lenet", Device: "cpu", BestAcc: 0.8533, BestEpoch: 3, Updated: at(15), CanResume: true, CanExtend: true},
		{Dir: filepath.Join(project, "train2"), Name: "train2", State: trainer.RunCrashed, Status: "crashed at epoch 2 of 10", Epoch: 2, Epochs: 10, Data: data, Model: "lenet", Device: "cpu", BestAcc: 0.81, BestEpoch: 2, Updated: at(12), CanResume: true, CanExtend: true},
		{Dir: filepath.Join(project, "train"), Name: "train", State: trainer.RunFinished, Status: "finished 10 epochs", Epoch: 10, Epochs: 10, Data: "builtin", Model: "lenet", Device: "cpu", BestAcc: 0.9721, BestEpoch: 9, Updated: at(9), CanExtend: true},
	}, nil
}

// TestGoldenSteps walks every step at 1024×700 with a 10-class dataset of
// long class names, on a machine without a GPU and on the DGX A100
// mock (8 GPUs), and compares each with its golden image (-update
// rewrites them).
func TestGoldenSteps(t *testing.T) {
	lockGoldenRoot(t)
	ds := filepath.Join(goldenRoot, "fashion")
	writeLongDataset(t, ds, 6)
	for _, machine := range []string{"nogpu", "dgxa100"} {
		t.Run(machine, func(t *testing.T) {
			rep := noGPUReport()
			device := "cpu"
			if machine == "dgxa100" {
				rep, device = dgxReport(t), "cuda:0"
				if ok, _, why := rep.DriverReady(); !ok {
					t.Fatalf("the DGX A100 mock is not ready: %s", why)
				}
			}
			project := filepath.Join(goldenRoot, machine, "runs")
			wz, loop := newTestWizard(t, Deps{
				Check:    func(context.Context) (gpu.Report, error) { return rep, nil },
				Train:    scriptedTrain(filepath.Join(project, "train3"), device),
				ListRuns: goldenRuns,
				OpenCUDA: fakeGPU,
			})
			win := wz.win
			loop.do(func() {
				wz.cfg.Project = project
				win.Resize(fyne.NewSize(1024, 700))
			})
			shot := func(name string) {
				t.Helper()
				wz.wg.Wait()
				loop.do(func() {
					if ms := wz.content.MinSize(); ms.Width > 1024 || ms.Height > 700 {
						t.Errorf("%s needs %v: more than 1024×700", name, ms)
					}
					if s := win.Canvas().Size(); s.Width != 1024 || s.Height != 700 {
						t.Errorf("%s: the window became %v", name, s)
					}
					assertImage(t, filepath.Join("golden", machine+"-"+name+".png"), win.Canvas().Capture())
				})
			}
			shot("1-check")

			loop.do(func() {
				wz.dataView.load(ds)
				wz.show(1)
			})
			wz.wg.Wait()
			if wz.dataset == nil || len(wz.dataset.Classes) != 10 || wz.dataset.Width != 28 {
				t.Fatalf("dataset: %+v", wz.dataset)
			}
			shot("2-dataset")

			loop.do(func() { wz.show(2) })
			wz.wg.Wait()
			loop.do(func() {
				opts := wz.settings.device.Options
				est := wz.settings.estimate.Text
				want := "the CPU"
				if machine == "dgxa100" {
					want = "CUDA:0"
					if len(opts) != 10 || !strings.HasPrefix(opts[9], "GPU 7: ") || !strings.Contains(opts[9], "A100") {
						t.Errorf("device options %q: want Automatic, CPU and 8 A100s", opts)
					}
				}
				if !strings.Contains(est, want) {
					t.Errorf("estimate %q: want it measured on %s", est, want)
				}
				if !strings.Contains(wz.settings.auto.Text, "Auto picks lenet") {
					t.Errorf("auto says %q", wz.settings.auto.Text)
				}
				wz.settings.estimate.SetText("About 1.2 s per epoch (measured now on this machine).")
			})
			shot("3-settings")

			loop.do(func() {
				test.Tap(wz.next)
				test.Tap(wz.train.start)
			})
			wz.wg.Wait()
			loop.do(func() {
				if wz.result == nil {
					t.Fatal("no result")
				}
				if got := wz.train.gpuRow.Visible(); got != (device != "cpu") {
					t.Errorf("GPU charts visible %v on %s", got, device)
				}
			})
			shot("4-train")

			loop.do(func() { test.Tap(wz.next) })
			shot("5-results")

			loop.do(func() {
				wz.showRuns()
			})
			wz.wg.Wait()
			loop.do(func() { wz.runs.table.Select(widget.TableCellID{Row: 1, Col: 0}) })
			shot("6-runs")
			loop.do(func() {
				if wz.runs.buttons["resume"].Disabled() || wz.runs.buttons["delete"].Disabled() {
					t.Error("a stopped run must be resumable and deletable")
				}
				wz.runs.table.Select(widget.TableCellID{Row: 0, Col: 0})
				if !wz.runs.buttons["delete"].Disabled() || !wz.runs.buttons["resume"].Disabled() {
					t.Error("a running run cannot be deleted or resumed")
				}
			})
		})
	}
}
