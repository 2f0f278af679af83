package detect

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// sq is a w×h box at the origin.
func sq(w, h float32) Box { return Box{X2: w, Y2: h} }

// TestEvaluateByHand checks cases worked out on paper.
func TestEvaluateByHand(t *testing.T) {
	// Two objects, three detections: the best one exact, the second a
	// false alarm, the third overlaps the second object by IoU 0.62.
	gt := []Object{{0, Box{0, 0, 10, 10}}, {0, Box{20, 0, 30, 10}}}
	preds := []Detection{
		{Class: 0, Score: 0.9, Box: Box{0, 0, 10, 10}},
		{Class: 0, Score: 0.8, Box: Box{50, 50, 60, 60}},
		{Class: 0, Score: 0.7, Box: Box{20, 0, 30, 6.2}},
	}
	m := Evaluate([][]Detection{preds}, [][]Object{gt}, []string{"a"})
	// At IoU 0.50-0.60 the third matches: recall 0.5, 0.5, 1 with
	// precision 1, 0.5, 2/3, made 1, 2/3, 2/3: the 51 recall points up to
	// 0.5 read 1, the 50 above read 2/3.
	ap50 := (51 + 50*2.0/3) / 101
	// From 0.65 on it does not: the 51 points up to 0.5 read 1, the rest 0.
	apHigh := 51.0 / 101
	want5095 := (3*ap50 + 7*apHigh) / 10
	if !near(m.MAP50, ap50, 1e-12) || !near(m.MAP5095, want5095, 1e-12) {
		t.Fatalf("mAP50 %.6f (want %.6f), mAP50-95 %.6f (want %.6f)", m.MAP50, ap50, m.MAP5095, want5095)
	}
	if m.Images != 1 || m.Objects != 2 || len(m.PerClass) != 1 || m.PerClass[0].Objects != 2 {
		t.Fatalf("counts: %+v", m)
	}
	// The best F1 is at a threshold at or below 0.7, where all three
	// count: precision 2/3, recall 1.
	if m.Threshold > 0.7 || !near(m.Precision, 2.0/3, 1e-9) || !near(m.Recall, 1, 1e-9) || !near(m.F1, 0.8, 1e-9) {
		t.Fatalf("P %.4f R %.4f F1 %.4f at %.3f, want 0.667, 1, 0.8 at ≤ 0.7", m.Precision, m.Recall, m.F1, m.Threshold)
	}
}

func TestEvaluateClasses(t *testing.T) {
	classes := []string{"cat", "dog", "bird"}
	// cat: found exactly; dog: an object, no detection (AP 0); bird: no
	// object, one detection (not counted in the mean).
	gt := [][]Object{{{0, sq(10, 10)}}, {{1, Box{5, 5, 15, 15}}}}
	preds := [][]Detection{{{Class: 0, Score: 0.9, Box: sq(10, 10)}}, {{Class: 2, Score: 0.9, Box: Box{5, 5, 15, 15}}, {Class: 7, Score: 1, Box: sq(1, 1)}}}
	m := Evaluate(preds, gt, classes)
	if len(m.PerClass) != 2 || m.PerClass[0].Class != "cat" || m.PerClass[1].Class != "dog" {
		t.Fatalf("per class: %+v", m.PerClass)
	}
	if !near(m.PerClass[0].AP50, 1, 1e-12) || !near(m.PerClass[0].AP5095, 1, 1e-12) || m.PerClass[1].AP50 != 0 {
		t.Fatalf("APs: %+v", m.PerClass)
	}
	if !near(m.MAP50, 0.5, 1e-12) || !near(m.MAP5095, 0.5, 1e-12) || m.Objects != 2 || m.Images != 2 {
		t.Fatalf("%+v", m)
	}
	// A detection in the wrong class is a miss, and ground truth beyond
	// the predictions' images still counts.
	m = Evaluate([][]Detection{{{Class: 1, Score: 0.9, Box: sq(10, 10)}}}, [][]Object{{{0, sq(10, 10)}}, {{0, sq(5, 5)}}}, classes)
	if m.MAP50 != 0 || m.Objects != 2 || m.Images != 2 {
		t.Fatalf("wrong class: %+v", m)
	}
	// Detections that are not numbers match nothing.
	nan := float32(math.NaN())
	m = Evaluate([][]Detection{{{Class: 0, Score: nan, Box: sq(10, 10)}, {Class: 0, Score: 0.9, Box: Box{nan, 0, 10, 10}}}}, [][]Object{{{0, sq(10, 10)}}}, classes)
	if m.MAP50 != 0 || m.Objects != 1 {
		t.Fatalf("NaN: %+v", m)
	}
	if m := Evaluate(nil, nil, classes); m.MAP50 != 0 || len(m.PerClass) != 0 {
		t.Fatalf("nothing: %+v", m)
	}
}

// TestEvaluateMatching: each object is taken once; a second detection of
// it is a false positive, and a detection takes the object it overlaps
// most, not the first.
func TestEvaluateMatching(t *testing.T) {
	gt := []Object{{0, Box{0, 0, 10, 10}}, {0, Box{4, 0, 14, 10}}}
	// The only detection overlaps the second object more (IoU 1 vs 0.43):
	// with the first taken, recall would be 0 at 0.5.
	m := Evaluate([][]Detection{{{Class: 0, Score: 0.5, Box: Box{4, 0, 14, 10}}}}, [][]Object{gt}, []string{"a"})
	if ap := (51.0) / 101; !near(m.MAP50, ap, 1e-12) {
		t.Fatalf("mAP50 %.6f, want %.6f", m.MAP50, ap)
	}
	dup := []Detection{{Class: 0, Score: 0.9, Box: sq(10, 10)}, {Class: 0, Score: 0.8, Box: sq(10, 10)}}
	m = Evaluate([][]Detection{dup}, [][]Object{{{0, sq(10, 10)}}}, []string{"a"})
	if !near(m.MAP50, 1, 1e-12) {
		t.Fatalf("a duplicate after the match does not lower AP: %.6f", m.MAP50)
	}
	m = Evaluate([][]Detection{{dup[1], {Class: 0, Score: 0.95, Box: Box{50, 50, 60, 60}}}}, [][]Object{{{0, sq(10, 10)}}}, []string{"a"})
	// A false alarm above the match: precision 0 then 0.5, recall 1 at
	// the second: AP 0.5 at every threshold.
	if !near(m.MAP50, 0.5, 1e-9) || !near(m.MAP5095, 0.5, 1e-9) {
		t.Fatalf("false alarm first: %+v", m)
	}
}

// golden is map_golden.json: cases and what numpy computed for them.
type golden struct {
	Numpy string `json:"numpy"`
	Cases []struct {
		Seed    int      `json:"seed"`
		Classes []string `json:"classes"`
		Truths  [][]struct {
			Class int        `json:"class"`
			Box   [4]float32 `json:"box"`
		} `json:"truths"`
		Preds [][]struct {
			Class int        `json:"class"`
			Score float32    `json:"score"`
			Box   [4]float32 `json:"box"`
		} `json:"preds"`
		Want struct {
			Objects   int     `json:"objects"`
			MAP50     float64 `json:"map50"`
			MAP5095   float64 `json:"map50_95"`
			Precision float64 `json:"precision"`
			Recall    float64 `json:"recall"`
			F1        float64 `json:"f1"`
			Threshold float64 `json:"threshold"`
			PerClass  []struct {
				Class     int     `json:"class"`
				Objects   int     `json:"objects"`
				AP50      float64 `json:"ap50"`
				AP5095    float64 `json:"ap50_95"`
				Precision float64 `json:"precision"`
				Recall    float64 `json:"recall"`
			} `json:"per_class"`
		} `json:"want"`
	} `json:"cases"`
}

// TestEvaluateGolden compares Evaluate with numpy on 40 random cases
// (testdata/map_golden.py wrote them with Debian's python3-numpy).
func TestEvaluateGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "map_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 40 {
		t.Fatalf("%d cases", len(g.Cases))
	}
	const tol = 1e-9
	nonTrivial := 0
	for _, c := range g.Cases {
		truths := make([][]Object, len(c.Truths))
		for i, im := range c.Truths {
			for _, o := range im {
				truths[i] = append(truths[i], Object{Class: o.Class, Box: Box{o.Box[0], o.Box[1], o.Box[2], o.Box[3]}})
			}
		}
		preds := make([][]Detection, len(c.Preds))
		for i, im := range c.Preds {
			for _, d := range im {
				preds[i] = append(preds[i], Detection{Class: d.Class, Score: d.Score, Box: Box{d.Box[0], d.Box[1], d.Box[2], d.Box[3]}})
			}
		}
		m := Evaluate(preds, truths, c.Classes)
		w := c.Want
		if m.Objects != w.Objects || len(m.PerClass) != len(w.PerClass) {
			t.Fatalf("seed %d: %d objects, %d classes; numpy %d, %d", c.Seed, m.Objects, len(m.PerClass), w.Objects, len(w.PerClass))
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"mAP50", m.MAP50, w.MAP50}, {"mAP50-95", m.MAP5095, w.MAP5095}, {"precision", m.Precision, w.Precision},
			{"recall", m.Recall, w.Recall}, {"F1", m.F1, w.F1}, {"threshold", m.Threshold, w.Threshold}} {
			if !near(f.got, f.want, tol) {
				t.Errorf("seed %d: %s %.12f, numpy %.12f", c.Seed, f.name, f.got, f.want)
			}
		}
		for k, pc := range w.PerClass {
			got := m.PerClass[k]
			if got.Class != c.Classes[pc.Class] || got.Objects != pc.Objects || !near(got.AP50, pc.AP50, tol) || !near(got.AP5095, pc.AP5095, tol) ||
				!near(got.Precision, pc.Precision, tol) || !near(got.Recall, pc.Recall, tol) {
				t.Errorf("seed %d class %d: %+v, numpy %+v", c.Seed, pc.Class, got, pc)
			}
		}
		if w.MAP5095 > 0.05 && w.MAP5095 < 0.95 {
			nonTrivial++
		}
	}
	if nonTrivial < 20 {
		t.Fatalf("only %d of the golden cases have an mAP50-95 between 0.05 and 0.95: the cases test too little", nonTrivial)
	}
}
