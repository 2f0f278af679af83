package detect

import "math"

// CentreRadius is the centre sampling radius, in strides: a cell is a
// candidate for an object when its centre lies inside the object's box
// and within this distance of the box's centre along both axes (FCOS's
// centre sampling).
const CentreRadius = 1.5

// Grid is a detector's output grid on the canvas: H×W cells of Stride
// pixels.
type Grid struct {
	H, W, Stride int
}

// Assign writes a batch's targets into dst (len(objs)·H·W cells of
// TargetFloats, image after image, cells row by row) and returns the
// number of positive cells. objs[i] are image i's objects on the canvas,
// in pixels. A cell is positive for the smallest object it is a candidate
// for (see CentreRadius); the cell holding an object's centre is always a
// candidate, so an object smaller than a cell still has one. Each
// positive cell's target is its object's class and box (in strides from
// the cell's centre); the weights make each term a mean per positive cell
// of the batch (the objectness weight is on every cell).
func Assign(dst []float32, objs [][]Object, g Grid) int {
	cells := g.H * g.W
	clear(dst[:len(objs)*cells*TargetFloats])
	owner := make([]int, cells)
	area := make([]float32, cells)
	npos := 0
	for i, im := range objs {
		for q := range owner {
			owner[q], area[q] = -1, float32(math.Inf(1))
		}
		for k, o := range im {
			assignObject(owner, area, k, o.Box, g)
		}
		for q, k := range owner {
			if k < 0 {
				continue
			}
			npos++
			t := dst[(i*cells+q)*TargetFloats:][:TargetFloats]
			cx, cy := (float32(q%g.W)+0.5)*float32(g.Stride), (float32(q/g.W)+0.5)*float32(g.Stride)
			b, s := im[k].Box, float32(g.Stride)
			t[TObj], t[TPosWeight], t[TClass] = 1, 1, float32(im[k].Class)
			t[TX1], t[TY1], t[TX2], t[TY2] = (b.X1-cx)/s, (b.Y1-cy)/s, (b.X2-cx)/s, (b.Y2-cy)/s
		}
	}
	w := 1 / float32(max(npos, 1))
	for q := 0; q < len(objs)*cells; q++ {
		t := dst[q*TargetFloats:][:TargetFloats]
		t[TObjWeight] = w
		t[TPosWeight] *= w
	}
	return npos
}

// assignObject makes object k (box b) the owner of its candidate cells
// that no smaller object holds.
func assignObject(owner []int, area []float32, k int, b Box, g Grid) {
	if !(b.X2 > b.X1 && b.Y2 > b.Y1) {
		return
	}
	s := float32(g.Stride)
	a := (b.X2 - b.X1) * (b.Y2 - b.Y1)
	bcx, bcy := (b.X1+b.X2)/2, (b.Y1+b.Y2)/2
	r := CentreRadius * s
	take := func(gx, gy int) {
		if gx < 0 || gy < 0 || gx >= g.W || gy >= g.H {
			return
		}
		if q := gy*g.W + gx; a < area[q] {
			owner[q], area[q] = k, a
		}
	}
	x0, x1 := int(max(b.X1, bcx-r)/s), int(min(b.X2, bcx+r)/s)
	y0, y1 := int(max(b.Y1, bcy-r)/s), int(min(b.Y2, bcy+r)/s)
	for gy := max(y0, 0); gy <= min(y1, g.H-1); gy++ {
		cy := (float32(gy) + 0.5) * s
		if cy <= b.Y1 || cy >= b.Y2 || abs32(cy-bcy) >= r {
			continue
		}
		for gx := max(x0, 0); gx <= min(x1, g.W-1); gx++ {
			cx := (float32(gx) + 0.5) * s
			if cx > b.X1 && cx < b.X2 && abs32(cx-bcx) < r {
				take(gx, gy)
			}
		}
	}
	take(int(bcx/s), int(bcy/s))
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
