package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/gpu/probe"
	"gpuwizard/gpu/watch"

	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

type noCommands struct{}

func (noCommands) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
}

// fakeWatch is the watch package's fake machine: ada (uid 1000) runs a
// dozen trainings; PID 4242 is on GPU 0 (a mock A100) at 87 %.
func fakeWatch(t *testing.T) watch.Options {
	t.Helper()
	root, err := filepath.Abs("../gpu/watch/testdata/root")
	if err != nil {
		t.Fatal(err)
	}
	s := nvmlfake.DGXA100()
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 1, nvml.Success }
	d := s.Devices[0]
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{PID: 4242, UsedGPUMemory: 10240 << 20}}, nvml.Success
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{GPU: 87}, nvml.Success }
	return watch.Options{Root: root, NVML: s, Machine: func(ctx context.Context, env map[string]string) *gpu.Facts {
		if env == nil {
			env = map[string]string{}
		}
		return probe.Probe(ctx, probe.Options{Root: root, Environ: env, NVML: s, Runner: noCommands{}, GOOS: "linux", GOARCH: "amd64", Home: env["HOME"], Cwd: "/"})
	}}
}

// waitUI polls cond on the UI loop until it holds.
func waitUI(t *testing.T, loop *uiLoop, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok := false
		loop.do(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchTab(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Watch: fakeWatch(t), WatchUID: 1000, WatchEvery: 50 * time.Millisecond})
	wv := wz.watch
	ui := loop.do
	defer func() {
		ui(wv.stop)
		wv.wg.Wait()
		time.Sleep(50 * time.Millisecond) // the last fyne.Do calls in flight
		ui(func() {})
	}()
	if wv.listStop != nil {
		t.Fatal("nothing is listed before the tab is opened")
	}
	ui(func() { wz.checkTab.SelectIndex(1) })
	// The list comes, the first training is chosen and watched live.
	waitUI(t, loop, "the first verdict", func() bool { return len(wv.cands) > 0 && strings.HasPrefix(wv.verdict.Text, "On ") })
	ui(func() {
		if len(wv.cands) != 11 || wv.cands[0].PID != 4242 || wv.pid != 4242 {
			t.Errorf("list: %d candidates, first %d, following %d", len(wv.cands), wv.cands[0].PID, wv.pid)
		}
		if wv.verdict.Text != "On GPU 0 (Mock NVIDIA A100-SXM4-40GB), 87 % busy, 10240 MiB" || wv.verdict.Importance != widget.SuccessImportance {
			t.Errorf("verdict %q importance %v", wv.verdict.Text, wv.verdict.Importance)
		}
		if len(wv.findings.Objects) == 0 || !strings.Contains(wv.evidence.Text, "libtorch_cuda.so") || !strings.Contains(wv.use.Text, "GPU 0: 10240 MiB") {
			t.Errorf("findings %d, evidence %q, use %q", len(wv.findings.Objects), wv.evidence.Text, wv.use.Text)
		}
		if c := candidateCell(wv.cands[0], 4); c != "GPU 0, 10240 MiB" {
			t.Errorf("GPU cell %q", c)
		}
		if c := candidateCell(wv.cands[0], 1); c != "python train.py --epochs 10  (+2)" {
			t.Errorf("command cell %q", c)
		}
		if !strings.Contains(wv.status.Text, "11 trainings running") {
			t.Errorf("status %q", wv.status.Text)
		}
	})
	// Choose the CPU-only wheel: its verdict replaces the first.
	ui(func() {
		for i, c := range wv.cands {
			if c.PID == 5101 {
				wv.table.Select(widget.TableCellID{Row: i, Col: 1})
				if cell := candidateCell(c, 4); cell != "—" {
					t.Errorf("GPU cell of a CPU process: %q", cell)
				}
			}
		}
	})
	waitUI(t, loop, "the CPU-only verdict", func() bool {
		return wv.verdict.Text == "On the CPU: a CPU-only build of torch 2.5.1+cpu is loaded"
	})
	ui(func() {
		if wv.pid != 5101 || wv.verdict.Importance != widget.DangerImportance {
			t.Errorf("following %d, importance %v", wv.pid, wv.verdict.Importance)
		}
	})
	// Back to "This machine": the list and the watch stop.
	ui(func() { wz.checkTab.SelectIndex(0) })
	wv.wg.Wait()
	ui(func() {
		if wv.listStop != nil || wv.followStop != nil {
			t.Error("still running after leaving the tab")
		}
	})
	// Reopened, it follows the same process again; Next leaves the step
	// and stops it.
	ui(func() { wz.checkTab.SelectIndex(1) })
	waitUI(t, loop, "the list again", func() bool { return wv.listStop != nil && wv.followStop != nil })
	ui(func() { wz.goNext() })
	wv.wg.Wait()
	wz.wg.Wait() // the Dataset step loads the built-in dataset
	ui(func() {
		if wz.cur != 1 || wv.listStop != nil || wv.followStop != nil || wv.pid != 5101 {
			t.Errorf("after Next: step %d, list %v, follow %v, pid %d", wz.cur, wv.listStop != nil, wv.followStop != nil, wv.pid)
		}
	})
}

func TestWatchViewShowsAnEndedProcess(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Watch: fakeWatch(t), WatchUID: 1000, WatchEvery: 50 * time.Millisecond})
	wv := wz.watch
	defer func() {
		loop.do(wv.stop)
		wv.wg.Wait()
		time.Sleep(50 * time.Millisecond)
		loop.do(func() {})
	}()
	// A PID that does not exist: a clear message, no crash.
	loop.do(func() { wv.follow(7777) })
	waitUI(t, loop, "the message", func() bool { return strings.HasPrefix(wv.verdict.Text, "Cannot watch this process") })
	loop.do(func() {
		if !strings.Contains(wv.verdict.Text, "no such process") {
			t.Errorf("verdict %q", wv.verdict.Text)
		}
	})
}

// Issue 19, 5: with no training running, the message takes the table's
// place instead of sitting on its header; the table comes back with rows.
func TestWatchEmptyStateReplacesTable(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Watch: fakeWatch(t), WatchUID: 4321, WatchEvery: 50 * time.Millisecond})
	wv := wz.watch
	defer func() {
		loop.do(wv.stop)
		wv.wg.Wait()
		time.Sleep(50 * time.Millisecond)
		loop.do(func() {})
	}()
	loop.do(func() { wz.checkTab.SelectIndex(1) })
	waitUI(t, loop, "an empty list", func() bool { return strings.HasPrefix(wv.status.Text, "No training running") })
	loop.do(func() {
		if wv.table.Visible() || !wv.empty.Visible() {
			t.Errorf("empty: table shown %v, message shown %v", wv.table.Visible(), wv.empty.Visible())
		}
		wv.status.SetText("No training running") // not the time
		assertImage(t, "watch-empty.png", wz.win.Canvas().Capture())
		wv.stop()
		wv.listed([]watch.Candidate{{PID: 4242, Command: "python train.py"}}, nil, time.Now())
		wv.stop()
		if !wv.table.Visible() || wv.empty.Visible() {
			t.Errorf("one training: table shown %v, message shown %v", wv.table.Visible(), wv.empty.Visible())
		}
	})
}
