package detect

import "math"

// The detector's loss, in float64: the reference the executor's kernels
// (trainer/exec: Backend.DetLoss and DetLossGrad, on the CPU and in CUDA)
// are tested against, and whose gradient is tested against finite
// differences.
//
// The head is N×(5+classes)×H×W: per cell the box (dx, dy, tw, th: the box
// centre's offset from the cell's centre and the log of its width and
// height, all in strides), the objectness logit and one logit per class.
// A cell's target is TargetFloats floats (see Assign). The terms per cell
// are
//
//	box = pos·(GIoU·(1 − GIoU(pred, target)) + L1·Σ|raw − (cx, cy, log w, log h)|)
//	cls = pos·Cls·Σ_c BCE(logit_c, c = class)
//	obj = objw·Obj·BCE(logit_obj, obj target)
//
// pos and objw being the target's weights: 1/(positive cells of the
// batch), so each term is a mean per positive cell as in YOLOX.

// Target floats per cell, in order.
const (
	TObj         = iota // objectness target (1 at a positive cell, 0 elsewhere)
	TObjWeight          // the objectness term's weight
	TPosWeight          // the box and class terms' weight (0: not a positive cell)
	TClass              // the class index
	TX1                 // the box the cell must predict: x1, y1, x2, y2 in strides from the cell's centre
	TY1                 //
	TX2                 //
	TY2                 //
	TargetFloats        // floats per cell
)

// LogClamp bounds tw and th before exp: a box at most e⁸ strides a side.
const LogClamp = 8

// Gains weigh the loss terms.
type Gains struct {
	GIoU, L1, Cls, Obj float64
}

// DefaultGains are the detector's gains (YOLOX's: the IoU term 5, the
// others 1).
func DefaultGains() Gains { return Gains{GIoU: 5, L1: 1, Cls: 1, Obj: 1} }

// Head is the shape of a detection head: N images, Classes, an H×W grid.
type Head struct {
	N, Classes, H, W int
}

// Channels is 5 + Classes.
func (h Head) Channels() int { return 5 + h.Classes }

// Cells is N·H·W.
func (h Head) Cells() int { return h.N * h.H * h.W }

// at is the index of channel k of cell q in the head.
func (h Head) at(q, k int) int {
	hw := h.H * h.W
	return (q/hw*h.Channels()+k)*hw + q%hw
}

func bce64(x, t float64) float64 { return math.Max(x, 0) - x*t + math.Log1p(math.Exp(-math.Abs(x))) }

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// GIoULoss64 is 1 − GIoU of the raw prediction r (dx, dy, tw, th) and the
// target box t (x1, y1, x2, y2), and its gradient by r (written where grad
// is not nil).
func GIoULoss64(r, t [4]float64, grad *[4]float64) float64 {
	tw, th := math.Min(math.Max(r[2], -LogClamp), LogClamp), math.Min(math.Max(r[3], -LogClamp), LogClamp)
	w, h := math.Exp(tw), math.Exp(th)
	p := [4]float64{r[0] - w/2, r[1] - h/2, r[0] + w/2, r[1] + h/2}
	iw := math.Max(math.Min(p[2], t[2])-math.Max(p[0], t[0]), 0)
	ih := math.Max(math.Min(p[3], t[3])-math.Max(p[1], t[1]), 0)
	in := iw * ih
	u := w*h + (t[2]-t[0])*(t[3]-t[1]) - in + 1e-7
	cw := math.Max(p[2], t[2]) - math.Min(p[0], t[0])
	ch := math.Max(p[3], t[3]) - math.Min(p[1], t[1])
	c := cw*ch + 1e-7
	loss := 2 - in/u - u/c
	if grad == nil {
		return loss
	}
	// L = 2 − I/U − U/C with U = area(p) + area(t) − I.
	dI, dA, dC := -1/u-in/(u*u)+1/c, in/(u*u)-1/c, u/(c*c)
	// ∂I, ∂area and ∂C by each side of p.
	var gI, gA, gC [4]float64
	gA = [4]float64{-h, -w, h, w}
	if iw > 0 && p[0] > t[0] {
		gI[0] = -ih
	}
	if iw > 0 && p[2] < t[2] {
		gI[2] = ih
	}
	if ih > 0 && p[1] > t[1] {
		gI[1] = -iw
	}
	if ih > 0 && p[3] < t[3] {
		gI[3] = iw
	}
	if p[0] < t[0] {
		gC[0] = -ch
	}
	if p[2] > t[2] {
		gC[2] = ch
	}
	if p[1] < t[1] {
		gC[1] = -cw
	}
	if p[3] > t[3] {
		gC[3] = cw
	}
	var g [4]float64
	for k := range g {
		g[k] = dI*gI[k] + dA*gA[k] + dC*gC[k]
	}
	grad[0], grad[1] = g[0]+g[2], g[1]+g[3]
	grad[2], grad[3] = 0, 0
	if tw == r[2] {
		grad[2] = (g[2] - g[0]) * w / 2
	}
	if th == r[3] {
		grad[3] = (g[3] - g[1]) * h / 2
	}
	return loss
}

// l1Target64 is the L1 term's target: the box's centre and log size.
func l1Target64(t [4]float64) [4]float64 {
	return [4]float64{(t[0] + t[2]) / 2, (t[1] + t[3]) / 2, math.Log(math.Max(t[2]-t[0], 1e-3)), math.Log(math.Max(t[3]-t[1], 1e-3))}
}

// cell64 reads cell q's raw box and target box.
func (h Head) cell64(head, tgt []float64, q int) (r, tb [4]float64, t []float64) {
	t = tgt[q*TargetFloats : (q+1)*TargetFloats]
	for k := range r {
		r[k] = head[h.at(q, k)]
	}
	copy(tb[:], t[TX1:TY2+1])
	return r, tb, t
}

// LossTerms64 is each cell's box, class and objectness terms (Cells()×3).
func LossTerms64(head, tgt []float64, h Head, g Gains) []float64 {
	out := make([]float64, 3*h.Cells())
	for q := 0; q < h.Cells(); q++ {
		r, tb, t := h.cell64(head, tgt, q)
		out[3*q+2] = t[TObjWeight] * g.Obj * bce64(head[h.at(q, 4)], t[TObj])
		pos := t[TPosWeight]
		if pos == 0 {
			continue
		}
		var s float64
		for c := 0; c < h.Classes; c++ {
			s += bce64(head[h.at(q, 5+c)], b2f(c == int(t[TClass])))
		}
		out[3*q+1] = pos * g.Cls * s
		lt := l1Target64(tb)
		var l1 float64
		for k := range r {
			l1 += math.Abs(r[k] - lt[k])
		}
		out[3*q] = pos * (g.GIoU*GIoULoss64(r, tb, nil) + g.L1*l1)
	}
	return out
}

// LossGrad64 is the head's gradient given dy, the gradient of the three
// summed terms (box, class, objectness).
func LossGrad64(head, tgt []float64, dy [3]float64, h Head, g Gains) []float64 {
	out := make([]float64, len(head))
	for q := 0; q < h.Cells(); q++ {
		r, tb, t := h.cell64(head, tgt, q)
		out[h.at(q, 4)] = dy[2] * t[TObjWeight] * g.Obj * (sigmoid64(head[h.at(q, 4)]) - t[TObj])
		pos := t[TPosWeight]
		if pos == 0 {
			continue
		}
		for c := 0; c < h.Classes; c++ {
			out[h.at(q, 5+c)] = dy[1] * pos * g.Cls * (sigmoid64(head[h.at(q, 5+c)]) - b2f(c == int(t[TClass])))
		}
		var gg [4]float64
		GIoULoss64(r, tb, &gg)
		lt := l1Target64(tb)
		for k := range r {
			out[h.at(q, k)] = dy[0] * pos * (g.GIoU*gg[k] + g.L1*sign64(r[k]-lt[k]))
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func sign64(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
