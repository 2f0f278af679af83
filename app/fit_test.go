package app

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// longClasses are tools/mkdataset -long's class names.
var longClasses = []string{"T-shirt or short-sleeved top", "Trousers and long pants", "Pullover sweater or jumper", "Dress of any length",
	"Coat or outdoor jacket", "Sandal or open summer shoe", "Shirt with buttons and collar", "Sneaker or sports shoe", "Bag, handbag or backpack", "Ankle boot with a low heel"}

// longResult is a finished 10-class run with long class names.
func longResult(dir string) *trainer.Result {
	n := len(longClasses)
	m := &trainer.Metrics{Split: "val", Images: 300, Accuracy: 0.853, Top5: 0.99, Loss: 0.41}
	m.Confusion = make([][]int, n)
	for i := range n {
		m.Confusion[i] = make([]int, n)
		m.Confusion[i][i] = 25
		m.Confusion[i][(i+3)%n] = 5
		m.PerClass = append(m.PerClass, trainer.ClassMetrics{Class: longClasses[i], Precision: 0.83, Recall: 0.83, F1: 0.83, Support: 30})
	}
	return &trainer.Result{RunDir: dir, Device: "cpu", Epochs: 3, BestEpoch: 3, Val: m, Classes: longClasses}
}

func TestStepsFit(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 3), LoadData: func(string, data.Options) (*data.Dataset, error) { return nil, nil }})
	for i := range wz.steps {
		loop.do(func() {
			if i == 4 {
				wz.result = longResult(t.TempDir())
			}
			wz.show(i)
		})
		wz.wg.Wait()
		loop.do(func() {
			ms := wz.content.MinSize()
			t.Logf("step %d %s: min %v", i, wz.steps[i].Title, ms)
			if ms.Width > 1024 || ms.Height > 700 {
				t.Errorf("step %s needs %v, more than 1024×700", wz.steps[i].Title, ms)
			}
		})
	}
	_ = context.Background
	_ = fyne.NewSize
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct{ lo, hi float64 }{{0, 1}, {0.2, 0.5}, {0.0009, 0.0011}, {0, 100}, {87, 93}, {1e-5, 3e-3}, {2.3, 2.31}, {0, 12345}, {-3, 7}} {
		ticks := niceTicks(tc.lo, tc.hi)
		eps := (ticks[1] - ticks[0]) * 1e-6
		if len(ticks) < 3 || len(ticks) > 5 || ticks[0] > tc.lo+eps || ticks[len(ticks)-1] < tc.hi-eps {
			t.Errorf("niceTicks(%g, %g) = %v: want 3 to 5 ticks covering the range", tc.lo, tc.hi, ticks)
		}
		seen := map[string]bool{}
		for _, v := range ticks {
			s := tickText("", v, ticks[1]-ticks[0], math.Max(math.Abs(ticks[0]), math.Abs(ticks[len(ticks)-1])))
			if seen[s] {
				t.Errorf("ticks %v: %q twice", ticks, s)
			}
			seen[s] = true
		}
	}
	if x := xTicks(10); x[0] != 0 || x[len(x)-1] != 10 || len(x) > 7 {
		t.Errorf("xTicks(10) = %v", x)
	}
	if x := xTicks(0.3); len(x) != 2 || x[1] != 1 {
		t.Errorf("xTicks(0.3) = %v", x)
	}
}

// TestLogFollowsItsEnd: new lines scroll the log to its end, also after
// its box shrank (a label above it wrapped onto a second line: not a
// scroll), unless the user scrolled up to read; scrolling back to the end
// follows again.
func TestLogFollowsItsEnd(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{})
	v := wz.train
	atEnd := func(what string) {
		t.Helper()
		end := v.log.Size().Height - v.logBox.Size().Height
		if end <= 0 || v.logBox.Offset.Y < end-1 {
			t.Errorf("%s: offset %v, the end is at %v", what, v.logBox.Offset.Y, end)
		}
	}
	loop.do(func() {
		wz.show(3)
		for i := range 100 {
			v.logf("line %d", i)
		}
		atEnd("100 lines")
		size := v.logBox.Size()
		v.logBox.Resize(fyne.NewSize(size.Width, size.Height-40))
		v.logf("after the box shrank")
		atEnd("the box shrank by 40 px")
		v.logBox.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: 300}}) // the mouse wheel, up
		up := v.logBox.Offset.Y
		v.logf("one more")
		if v.logBox.Offset.Y != up {
			t.Errorf("scrolled up to %v, the log moved to %v", up, v.logBox.Offset.Y)
		}
		v.logBox.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: -1e6}}) // and back down
		v.logf("following again")
		atEnd("scrolled back to the end")
	})
}

// TestPausedShowsNoSpeed: paused, the progress bar says so and the line
// under it has no speed and no time left.
func TestPausedShowsNoSpeed(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 1_000_000)})
	v := wz.train
	loop.do(func() {
		wz.show(3)
		test.Tap(v.start)
	})
	waitUI(t, loop, "a step shown", func() bool { return v.last != nil })
	loop.do(func() {
		test.Tap(v.pause)
		if !strings.HasPrefix(v.progress.TextFormatter(), "Paused") || strings.Contains(v.where.Text, "images/s") || strings.Contains(v.where.Text, "left") {
			t.Errorf("paused: bar %q, line %q", v.progress.TextFormatter(), v.where.Text)
		}
		test.Tap(v.pause)
		if strings.HasPrefix(v.progress.TextFormatter(), "Paused") || !strings.Contains(v.where.Text, "images/s") {
			t.Errorf("resumed: bar %q, line %q", v.progress.TextFormatter(), v.where.Text)
		}
		v.halt()
	})
	wz.wg.Wait()
}

// TestSettingsErrorsClear: the step's error goes once the field is fixed,
// and a YAML mistake is told in plain words with its line and setting.
func TestSettingsErrorsClear(t *testing.T) {
	var pick string // the file "Load settings…" is given
	wz, loop := newTestWizard(t, Deps{PickFile: func(_ fyne.Window, done func(string)) { done(pick) }})
	loop.do(func() {
		wz.show(2)
		wz.settings.entries["batch"].SetText("0")
		test.Tap(wz.next)
		if !strings.Contains(wz.status.Text, "batch size") {
			t.Fatalf("status %q", wz.status.Text)
		}
		wz.settings.entries["batch"].SetText("32")
		if wz.status.Text != "" {
			t.Errorf("fixed, the error stays: %q", wz.status.Text)
		}
	})
	pick = filepath.Join(t.TempDir(), "run.yaml")
	for content, want := range map[string]string{
		"model: lenet\nepochs: ten\n": pick + `: line 2 (epochs): "ten" is not a whole number`,
		"epochs: 3\nbatchsize: 64\n":  pick + `: line 2: "batchsize" is not a setting gpuwizard knows (did you mean "batch"?)`,
	} {
		os.WriteFile(pick, []byte(content), 0o644)
		loop.do(func() {
			wz.settings.loadYAML()
			if wz.status.Text != want {
				t.Errorf("Load settings… of %q says %q, want %q", content, wz.status.Text, want)
			}
		})
	}
}

// TestEstimateFollowsSettings: changing the epochs measures again, and the
// estimate names them.
func TestEstimateFollowsSettings(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{})
	loop.do(func() { wz.show(1) })
	wz.wg.Wait()
	loop.do(func() {
		wz.show(2)
		wz.settings.model.SetSelected("mlp")
	})
	waitUI(t, loop, "the first estimate", func() bool { return strings.Contains(wz.settings.estimate.Text, "per epoch on the CPU") })
	loop.do(func() { wz.settings.entries["epochs"].SetText("7") })
	waitUI(t, loop, "the estimate for 7 epochs", func() bool { return strings.Contains(wz.settings.estimate.Text, "for 7 epochs") })
	loop.do(func() { wz.settings.entries["epochs"].SetText("x") })
	waitUI(t, loop, "the estimate waiting", func() bool { return strings.Contains(wz.settings.estimate.Text, "waits for valid settings") })
	wz.wg.Wait()
}
