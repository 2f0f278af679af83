package app

import (
	"context"
	"math"
	"testing"

	"fyne.io/fyne/v2"

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
