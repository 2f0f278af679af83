package detect

import (
	"math"
	"testing"
)

func TestIoU(t *testing.T) {
	for _, c := range []struct {
		a, b Box
		want float32
	}{
		{Box{0, 0, 10, 10}, Box{0, 0, 10, 10}, 1},
		{Box{0, 0, 10, 10}, Box{5, 0, 15, 10}, 50.0 / 150},
		{Box{0, 0, 10, 10}, Box{10, 0, 20, 10}, 0}, // touching
		{Box{0, 0, 10, 10}, Box{2, 2, 4, 4}, 4.0 / 100},
		{Box{0, 0, 0, 0}, Box{0, 0, 0, 0}, 0},
		{Box{5, 5, 1, 1}, Box{0, 0, 10, 10}, 0}, // inverted
		{Box{float32(math.NaN()), 0, 10, 10}, Box{0, 0, 10, 10}, 0},
		{Box{0, 0, float32(math.Inf(1)), 10}, Box{0, 0, 10, 10}, 0},
	} {
		if got := IoU(c.a, c.b); math.Abs(float64(got-c.want)) > 1e-6 || IoU(c.b, c.a) != got {
			t.Errorf("IoU(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestNMS(t *testing.T) {
	dets := []Detection{
		{Class: 0, Score: 0.6, Box: Box{1, 0, 11, 10}},                 // IoU 0.82 with the best cat: suppressed
		{Class: 0, Score: 0.9, Box: Box{0, 0, 10, 10}},                 // the best cat
		{Class: 1, Score: 0.8, Box: Box{0, 0, 10, 10}},                 // a dog in the same place: another class, kept
		{Class: 0, Score: 0.7, Box: Box{5, 0, 15, 10}},                 // IoU 0.33 with the best cat: kept at 0.5
		{Class: 0, Score: float32(math.NaN()), Box: Box{0, 0, 10, 10}}, // dropped
		{Class: 0, Score: 0.1, Box: Box{50, 50, 60, 60}},               // alone: kept
	}
	orig := append([]Detection(nil), dets...)
	got := NMS(dets, 0.5, 0)
	want := []float32{0.9, 0.8, 0.7, 0.1}
	if len(got) != len(want) {
		t.Fatalf("kept %d: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Score != w {
			t.Fatalf("kept %+v, want scores %v", got, want)
		}
	}
	for i := range dets {
		if dets[i] != orig[i] && !math.IsNaN(float64(dets[i].Score)) {
			t.Fatal("NMS changed its input")
		}
	}
	// A lower IoU threshold suppresses the 0.7 cat too; the cap keeps
	// the best.
	if got := NMS(dets, 0.3, 0); len(got) != 3 {
		t.Fatalf("at 0.3: %+v", got)
	}
	if got := NMS(dets, 0.5, 2); len(got) != 2 || got[0].Score != 0.9 || got[1].Score != 0.8 {
		t.Fatalf("max 2: %+v", got)
	}
	if got := NMS(nil, 0.5, 10); len(got) != 0 {
		t.Fatalf("nothing in, %+v out", got)
	}
}

// TestNMSCandidates: a flood of boxes is cut to the best MaxNMSCandidates
// before suppression: the 100 weakest, each alone in its place, are not
// looked at.
func TestNMSCandidates(t *testing.T) {
	dets := make([]Detection, MaxNMSCandidates+100)
	for i := range dets {
		dets[i] = Detection{Class: i % 3, Score: float32(i+1) / float32(len(dets)), Box: Box{0, 0, 10, 10}}
		if i < 100 {
			x := float32(20 + 20*i)
			dets[i].Box = Box{x, 0, x + 10, 10}
		}
	}
	if got := NMS(dets, 0.5, 0); len(got) != 3 {
		t.Fatalf("%d kept, want 3 (one a class: the weakest 100 are cut)", len(got))
	}
	if got := NMS(dets[:200], 0.5, 0); len(got) != 103 {
		t.Fatalf("%d kept of 200, want 103", len(got))
	}
}
