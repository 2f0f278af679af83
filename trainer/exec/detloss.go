package exec

import "github.com/chewxy/math32"

// The detection loss (Backend.DetLoss and DetLossGrad) on the CPU. A cell
// of the head (Det) holds the box (dx, dy, tw, th: the box centre's offset
// from the cell's centre and its log size, in strides), the objectness
// logit and the class logits; its target (DetTargetFloats floats) the
// objectness target and weight, the positive weight, the class and the
// box. The terms per cell are
//
//	box = pos·(GIoU·(1 − GIoU(pred, target)) + L1·Σ|raw − (cx, cy, log w, log h)|)
//	cls = pos·Cls·Σ_c BCE(logit_c, c = class)
//	obj = objw·Obj·BCE(logit_obj, obj target)
//
// with BCE the binary cross-entropy of a logit (log-sum-exp form, stable
// for any logit). Package detect's LossTerms64 is the float64 reference.

// detEps keeps GIoU's quotients finite for empty boxes.
const detEps = 1e-7

// bce is the binary cross-entropy of logit x against target t.
func bce(x, t float32) float32 {
	return max(x, 0) - x*t + math32.Log1p(math32.Exp(-math32.Abs(x)))
}

func sigmoid(x float32) float32 { return 1 / (1 + math32.Exp(-x)) }

// giou returns 1 − GIoU of the predicted box (raw dx, dy, tw, th) and the
// target box t (x1, y1, x2, y2), and, when grad is not nil, its gradient
// with respect to the raw values (tw and th clamped to ±DetLogClamp have
// none).
func giou(r, t *[4]float32, grad *[4]float32) float32 {
	tw, th := min(max(r[2], -DetLogClamp), DetLogClamp), min(max(r[3], -DetLogClamp), DetLogClamp)
	w, h := math32.Exp(tw), math32.Exp(th)
	px1, px2, py1, py2 := r[0]-w/2, r[0]+w/2, r[1]-h/2, r[1]+h/2
	iw := max(min(px2, t[2])-max(px1, t[0]), 0)
	ih := max(min(py2, t[3])-max(py1, t[1]), 0)
	in := iw * ih
	u := w*h + (t[2]-t[0])*(t[3]-t[1]) - in + detEps
	cw, ch := max(px2, t[2])-min(px1, t[0]), max(py2, t[3])-min(py1, t[1])
	c := cw*ch + detEps
	loss := 2 - in/u - u/c
	if grad == nil {
		return loss
	}
	dI := -1/u - in/(u*u) + 1/c // through I, U = … − I
	dA := in/(u*u) - 1/c        // through the predicted area
	dC := u / (c * c)
	var g [4]float32 // by x1, y1, x2, y2
	g[0], g[2] = -h*dA, h*dA
	g[1], g[3] = -w*dA, w*dA
	if iw > 0 && px1 > t[0] {
		g[0] -= ih * dI
	}
	if iw > 0 && px2 < t[2] {
		g[2] += ih * dI
	}
	if ih > 0 && py1 > t[1] {
		g[1] -= iw * dI
	}
	if ih > 0 && py2 < t[3] {
		g[3] += iw * dI
	}
	if px1 < t[0] {
		g[0] -= ch * dC
	}
	if px2 > t[2] {
		g[2] += ch * dC
	}
	if py1 < t[1] {
		g[1] -= cw * dC
	}
	if py2 > t[3] {
		g[3] += cw * dC
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

// l1Target is the L1 term's target for box t: its centre and log size.
func l1Target(t *[4]float32) [4]float32 {
	return [4]float32{(t[0] + t[2]) / 2, (t[1] + t[3]) / 2,
		math32.Log(max(t[2]-t[0], 1e-3)), math32.Log(max(t[3]-t[1], 1e-3))}
}

func sign(v float32) float32 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// detCell is one cell's head values (channel stride hw) and target.
func detCell(head, tgt []float32, d Det, q int) (base, hw int, t []float32) {
	hw = d.H * d.W
	n, p := q/hw, q%hw
	return n*d.Channels()*hw + p, hw, tgt[q*DetTargetFloats : (q+1)*DetTargetFloats]
}

// DetLossSums is the loss of a whole batch: its box, class and objectness
// terms summed over the cells (terms is scratch of 3·d.Cells() floats).
func DetLossSums(head, tgt, terms []float32, d Det) [3]float64 {
	DetLossCPU(head, tgt, terms, d, 0, d.Cells())
	var sum [3]float64
	for i, v := range terms {
		sum[i%3] += float64(v)
	}
	return sum
}

// DetLossCPU writes the loss terms of cells lo..hi-1 (3 floats each).
func DetLossCPU(head, tgt, terms []float32, d Det, lo, hi int) {
	for q := lo; q < hi; q++ {
		b, hw, t := detCell(head, tgt, d, q)
		out := terms[3*q : 3*q+3]
		out[0], out[1] = 0, 0
		out[2] = t[1] * d.Obj * bce(head[b+4*hw], t[0])
		pos := t[2]
		if pos == 0 {
			continue
		}
		cls := int(t[3])
		var s float32
		for c := 0; c < d.Classes; c++ {
			s += bce(head[b+(5+c)*hw], b2f(c == cls))
		}
		out[1] = pos * d.Cls * s
		r := [4]float32{head[b], head[b+hw], head[b+2*hw], head[b+3*hw]}
		tb := [4]float32{t[4], t[5], t[6], t[7]}
		lt := l1Target(&tb)
		var l1 float32
		for k := range r {
			l1 += math32.Abs(r[k] - lt[k])
		}
		out[0] = pos * (d.GIoU*giou(&r, &tb, nil) + d.L1*l1)
	}
}

// DetLossGradCPU writes the head's gradient at cells lo..hi-1, g being
// the gradient of the three summed terms.
func DetLossGradCPU(head, tgt, g, out []float32, d Det, lo, hi int) {
	for q := lo; q < hi; q++ {
		b, hw, t := detCell(head, tgt, d, q)
		out[b+4*hw] = g[2] * t[1] * d.Obj * (sigmoid(head[b+4*hw]) - t[0])
		pos := t[2]
		if pos == 0 {
			for k := 0; k < 4; k++ {
				out[b+k*hw] = 0
			}
			for c := 0; c < d.Classes; c++ {
				out[b+(5+c)*hw] = 0
			}
			continue
		}
		cls := int(t[3])
		for c := 0; c < d.Classes; c++ {
			out[b+(5+c)*hw] = g[1] * pos * d.Cls * (sigmoid(head[b+(5+c)*hw]) - b2f(c == cls))
		}
		r := [4]float32{head[b], head[b+hw], head[b+2*hw], head[b+3*hw]}
		tb := [4]float32{t[4], t[5], t[6], t[7]}
		lt := l1Target(&tb)
		var gg [4]float32
		giou(&r, &tb, &gg)
		for k := range r {
			out[b+k*hw] = g[0] * pos * (d.GIoU*gg[k] + d.L1*sign(r[k]-lt[k]))
		}
	}
}

type detJob struct {
	head, tgt, terms, g, out []float32
	d                        Det
	grad                     bool
}

func (j *detJob) Run(_, lo, hi int) {
	if j.grad {
		DetLossGradCPU(j.head, j.tgt, j.g, j.out, j.d, lo, hi)
		return
	}
	DetLossCPU(j.head, j.tgt, j.terms, j.d, lo, hi)
}

// DetLoss implements Backend (cells in parallel).
func (g *GoBackend) DetLoss(head, tgt, terms Buf, d Det) {
	g.j.det = detJob{head: g.bufs[head], tgt: g.bufs[tgt], terms: g.bufs[terms], d: d}
	g.pool.For(d.Cells(), 256, &g.j.det)
}

// DetLossGrad implements Backend (cells in parallel).
func (g *GoBackend) DetLossGrad(head, tgt, gr, out Buf, d Det) {
	g.j.det = detJob{head: g.bufs[head], tgt: g.bufs[tgt], g: g.bufs[gr], out: g.bufs[out], d: d, grad: true}
	g.pool.For(d.Cells(), 256, &g.j.det)
}
