package detect

import (
	"math"
	"testing"
)

// perfectHead is the head a perfect detector writes for targets tgt (one
// image): at each positive cell its box, a sure objectness and class.
func perfectHead(tgt []float32, classes int, g Grid) []float32 {
	hw := g.H * g.W
	head := make([]float32, (5+classes)*hw)
	for q := 0; q < hw; q++ {
		t := tgt[q*TargetFloats:][:TargetFloats]
		head[4*hw+q] = -20
		for c := 0; c < classes; c++ {
			head[(5+c)*hw+q] = -20
		}
		if t[TPosWeight] == 0 {
			continue
		}
		head[q], head[hw+q] = (t[TX1]+t[TX2])/2, (t[TY1]+t[TY2])/2
		head[2*hw+q] = float32(math.Log(float64(t[TX2] - t[TX1])))
		head[3*hw+q] = float32(math.Log(float64(t[TY2] - t[TY1])))
		head[4*hw+q] = 20
		head[(5+int(t[TClass]))*hw+q] = 20
	}
	return head
}

// TestAssignDecodeRoundTrip: targets assigned to the objects, written
// back as a perfect head, decode (with NMS) to the objects themselves,
// and score mAP 1.
func TestAssignDecodeRoundTrip(t *testing.T) {
	g := Grid{H: 8, W: 8, Stride: 8}
	objs := [][]Object{
		{{Class: 1, Box: Box{X1: 3, Y1: 5, X2: 30, Y2: 40}}, {Class: 0, Box: Box{X1: 36, Y1: 30, X2: 60, Y2: 62}}},
		{{Class: 2, Box: Box{X1: 10, Y1: 10, X2: 14, Y2: 13}}}, // smaller than a cell
		{},
	}
	tgt := make([]float32, len(objs)*g.H*g.W*TargetFloats)
	npos := Assign(tgt, objs, g)
	if npos < 4 {
		t.Fatalf("%d positive cells for 3 objects: want several for the large ones", npos)
	}
	var preds [][]Detection
	for i, want := range objs {
		cells := tgt[i*g.H*g.W*TargetFloats : (i+1)*g.H*g.W*TargetFloats]
		for q := 0; q < g.H*g.W; q++ {
			if w := cells[q*TargetFloats+TObjWeight]; math.Abs(float64(w)-1/float64(npos)) > 1e-7 {
				t.Fatalf("image %d cell %d: objectness weight %v, want 1/%d", i, q, w, npos)
			}
		}
		got := Detections(perfectHead(cells, 3, g), 3, g, 64, PredictConf, PredictIoU, MaxPerImage)
		if len(got) != len(want) {
			t.Fatalf("image %d: %d detections %v, want %d", i, len(got), got, len(want))
		}
		for _, o := range want {
			found := false
			for _, d := range got {
				found = found || d.Class == o.Class && IoU(d.Box, o.Box) > 0.999
			}
			if !found {
				t.Errorf("image %d: object %+v not among %+v", i, o, got)
			}
		}
		preds = append(preds, got)
	}
	m := Evaluate(preds, objs, []string{"a", "b", "c"})
	if math.Abs(m.MAP50-1) > 1e-9 || math.Abs(m.MAP5095-1) > 1e-9 {
		t.Fatalf("a perfect head scores mAP50 %v mAP50-95 %v, want 1", m.MAP50, m.MAP5095)
	}
}

// TestAssignPrefersTheSmallerObject: a cell that two objects claim
// predicts the smaller one, and a cell outside every box predicts none.
func TestAssignPrefersTheSmallerObject(t *testing.T) {
	g := Grid{H: 4, W: 4, Stride: 8}
	big := Object{Class: 0, Box: Box{X1: 0, Y1: 0, X2: 32, Y2: 32}}
	small := Object{Class: 1, Box: Box{X1: 8, Y1: 8, X2: 16, Y2: 16}}
	tgt := make([]float32, g.H*g.W*TargetFloats)
	Assign(tgt, [][]Object{{big, small}}, g)
	cell := func(gx, gy int) []float32 { return tgt[(gy*g.W+gx)*TargetFloats:][:TargetFloats] }
	if c := cell(1, 1); c[TPosWeight] == 0 || c[TClass] != 1 {
		t.Fatalf("cell (1,1) holds the small object's centre: target %v", c)
	}
	if c := cell(2, 2); c[TPosWeight] == 0 || c[TClass] != 0 {
		t.Fatalf("cell (2,2) is the big object's: target %v", c)
	}
	if c := cell(3, 3); c[TPosWeight] != 0 {
		t.Fatalf("cell (3,3) is 1.5 strides from the big object's centre along both axes: target %v", c)
	}
}
