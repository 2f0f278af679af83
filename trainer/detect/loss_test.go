package detect

import (
	"math"
	"math/rand"
	"testing"
)

// randomTargets fills cells' targets: a third positive, boxes near or
// away from the cell.
func randomTargets(rng *rand.Rand, h Head) []float64 {
	t := make([]float64, h.Cells()*TargetFloats)
	for q := 0; q < h.Cells(); q++ {
		c := t[q*TargetFloats:]
		c[TObjWeight] = 0.25
		if rng.Intn(3) > 0 {
			continue
		}
		x1, y1 := rng.Float64()*6-4, rng.Float64()*6-4
		c[TObj], c[TPosWeight], c[TClass] = 1, 0.25, float64(rng.Intn(h.Classes))
		c[TX1], c[TY1], c[TX2], c[TY2] = x1, y1, x1+0.2+rng.Float64()*5, y1+0.2+rng.Float64()*5
	}
	return t
}

// TestLossGradMatchesFiniteDifferences: the float64 reference's gradient
// (the one the kernels are tested against) is the derivative of its
// terms: central differences of Σ dy·terms at every head value, away from
// the kinks (L1 at its target, GIoU where a side crosses the target's).
func TestLossGradMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	h := Head{N: 2, Classes: 3, H: 3, W: 4}
	g := Gains{GIoU: 5, L1: 1, Cls: 0.7, Obj: 1.3}
	dy := [3]float64{0.9, -1.1, 1.7}
	head := make([]float64, h.Cells()*h.Channels())
	for i := range head {
		head[i] = rng.Float64()*3 - 1.5
	}
	tgt := randomTargets(rng, h)
	f := func(x []float64) float64 {
		var s float64
		for q, v := range LossTerms64(x, tgt, h, g) {
			s += dy[q%3] * v
		}
		return s
	}
	grad := LossGrad64(head, tgt, dy, h, g)
	const eps = 1e-6
	checked, nonzero := 0, 0
	for i := range head {
		x := append([]float64(nil), head...)
		x[i] += eps
		up := f(x)
		x[i] -= 2 * eps
		down := f(x)
		num := (up - down) / (2 * eps)
		// A kink within eps: the one-sided slopes differ; skip it.
		x[i] = head[i] + eps/2
		mid := (f(x) - f(head)) / (eps / 2)
		if math.Abs(mid-num) > 1e-4*(1+math.Abs(num)) {
			continue
		}
		checked++
		if grad[i] != 0 {
			nonzero++
		}
		if math.Abs(grad[i]-num) > 1e-5*(1+math.Abs(num)) {
			t.Errorf("head value %d: gradient %.9g, finite differences %.9g", i, grad[i], num)
		}
	}
	if checked < len(head)*9/10 || nonzero < len(head)/3 {
		t.Fatalf("checked %d of %d values (%d with a gradient): too few", checked, len(head), nonzero)
	}
}

// TestGIoULossCases: hand-computed values of 1 − GIoU.
func TestGIoULossCases(t *testing.T) {
	ln := math.Log
	for _, c := range []struct {
		name string
		r, t [4]float64
		want float64
	}{
		{"identical", [4]float64{0, 0, ln(2), ln(2)}, [4]float64{-1, -1, 1, 1}, 0},
		// pred [0,2]×[0,2] vs target [1,3]×[0,2]: I = 2, U = 6, C = 6.
		{"half overlap", [4]float64{1, 1, ln(2), ln(2)}, [4]float64{1, 0, 3, 2}, 1 - 2.0/6},
		// pred [0,1]×[0,1] vs target [2,3]×[0,1]: I = 0, U = 2, C = 3:
		// GIoU = 0 − (3 − 2)/3.
		{"apart", [4]float64{0.5, 0.5, 0, 0}, [4]float64{2, 0, 3, 1}, 1 + 1.0/3},
	} {
		if got := GIoULoss64(c.r, c.t, nil); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: 1 − GIoU = %.9g, want %.9g", c.name, got, c.want)
		}
	}
}
