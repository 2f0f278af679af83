package app

import (
	"math"
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// Issue 19, 9: the x axis ends at the run's end (105 epochs, not 120),
// with round ticks before it.
func TestXTicksEndAtTheRun(t *testing.T) {
	if got := xTicks(105); !slices.Equal(got, []float64{0, 20, 40, 60, 80, 105}) {
		t.Errorf("xTicks(105) = %v", got)
	}
	for n := 1; n <= 3000; n++ {
		ticks := xTicks(float64(n))
		step := ticks[1] - ticks[0]
		if ticks[0] != 0 || ticks[len(ticks)-1] != float64(n) || len(ticks) > 7 || len(ticks) < 2 {
			t.Fatalf("xTicks(%d) = %v: want 0 … %d, at most 7", n, ticks, n)
		}
		for k := 1; k < len(ticks)-1; k++ {
			if ticks[k]-ticks[k-1] != step || math.Mod(ticks[k], step) != 0 {
				t.Fatalf("xTicks(%d) = %v: not evenly stepped", n, ticks)
			}
		}
		if len(ticks) > 2 && float64(n)-ticks[len(ticks)-2] <= step/2 {
			t.Fatalf("xTicks(%d) = %v: a tick crowds the end", n, ticks)
		}
	}
	if got := xTicks(4.5); got[len(got)-1] != 5 {
		t.Errorf("xTicks(4.5) = %v: want the axis to end at 5", got)
	}
	test.NewTempApp(t)
	c := NewLineChart("Loss", &Series{Name: "train", Color: colTrain})
	c.XMax = 105
	c.Append(0, 50, 1)
	w := test.NewTempWindow(t, c)
	w.Resize(fyne.NewSize(500, 200))
	c.Refresh()
	var shown []string
	for _, l := range test.WidgetRenderer(c).(*chartRenderer).labels {
		if !l.Hidden {
			shown = append(shown, l.Text)
		}
	}
	if !slices.Contains(shown, "105 epochs") || slices.Contains(shown, "120") || slices.Contains(shown, "120 epochs") {
		t.Errorf("labels %q: want the axis to end at 105 epochs", shown)
	}
}
