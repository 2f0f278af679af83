package exec

import (
	"github.com/chewxy/math32"

	"gpuwizard/trainer/exec/internal/vmath"
)

// NormSiLUer is a backend that runs a training batch norm with its
// per-channel scale and shift and a SiLU after them (the detector's
// conv-BN-SiLU blocks) as one kernel forward and one backward, where the
// graph has five element-wise ops forward and six backward, each a pass
// over the activation. The planner fuses such blocks on backends that
// implement it (the Go backend).
type NormSiLUer interface {
	// NormSiLU writes y = SiLU(x̂·γ + β), x̂ = (x − mean)/σ with the batch's
	// statistics, which it saves (mean, then 1/σ: 2·C) and folds into
	// running, as BatchNorm does in training. gamma and beta hold C floats.
	// x lies as p.Part says; y is N×C×HW.
	NormSiLU(x, gamma, beta, y, save, running Buf, p Norm)
	// NormSiLUGrad writes, from x, the gradient dy of y and save, the
	// gradient dz of the SiLU's input, dx, and the gradients of γ and β
	// (C floats each, overwritten). x, dz and dx lie as p.Part says; dy
	// is N×C×HW.
	NormSiLUGrad(x, dy, gamma, beta, save, dz, dx, dgamma, dbeta Buf, p Norm)
}

var _ NormSiLUer = (*GoBackend)(nil)

// normChunk is how many floats of a channel's plane the fused kernels take
// at a time: their intermediates stay in the first-level cache.
const normChunk = 512

type normSiLUJob struct {
	x, gamma, beta, y, save, running []float32
	p                                Norm
}

func (j *normSiLUJob) Run(_, lo, hi int) {
	p := j.p
	var t [normChunk]float32
	for c := lo; c < hi; c++ {
		mean, inv := normStats(j.x, j.save, j.running, p, c)
		sc, sh := normAffine(mean, inv, j.gamma[c], j.beta[c])
		for n := 0; n < p.N; n++ {
			xo, yo := p.Plane(n, c), (n*p.C+c)*p.HW
			for k := 0; k < p.HW; k += normChunk {
				w := min(normChunk, p.HW-k)
				vmath.ScaleShift(t[:w], j.x[xo+k:xo+k+w], sc, sh)
				vmath.SiLU(j.y[yo+k:yo+k+w], t[:w])
			}
		}
	}
}

// normAffine folds the normalisation into the scale and shift: z =
// (x − mean)·inv·γ + β = x·s + t. The backward pass computes z the same
// way, so both see the same z.
func normAffine(mean, inv, gamma, beta float32) (s, t float32) {
	s = inv * gamma
	return s, beta - mean*s
}

// normStats computes channel c's batch mean and 1/σ (sums in float64),
// saves them in S and folds them into the running statistics R: a batch
// norm in training, fused or not.
func normStats(X, S, R []float32, p Norm, c int) (mean, inv float32) {
	n := float64(p.N * p.HW)
	var s, ss float64
	for b := 0; b < p.N; b++ {
		s += vmath.Sum64(X[p.Plane(b, c):][:p.HW])
	}
	mean = float32(s / n)
	for b := 0; b < p.N; b++ {
		ss += vmath.SqDev64(X[p.Plane(b, c):][:p.HW], mean)
	}
	inv = 1 / math32.Sqrt(float32(ss/n)+p.Epsilon)
	S[c], S[p.C+c] = mean, inv
	R[c] = p.Momentum*mean + (1-p.Momentum)*R[c]
	R[p.C+c] = p.Momentum*float32(ss/(n-1)) + (1-p.Momentum)*R[p.C+c]
	return mean, inv
}

// NormSiLU implements NormSiLUer.
func (g *GoBackend) NormSiLU(x, gamma, beta, y, save, running Buf, p Norm) {
	g.j.normSiLU = normSiLUJob{x: g.bufs[x], gamma: g.bufs[gamma], beta: g.bufs[beta], y: g.bufs[y],
		save: g.bufs[save], running: g.bufs[running], p: p}
	g.pool.For(p.C, 1, &g.j.normSiLU)
}

type normSiLUGradJob struct {
	x, dy, gamma, beta, save, dz, dx, dgamma, dbeta []float32
	p                                               Norm
}

// Run computes, per channel, in one pass over x and dy: z = x·s + t (see
// normAffine), dz = SiLU′(z)·dy (written), and the sums Σdz and
// Σ(x − mean)·dz, from which come β's gradient (Σdz), γ's (Σx̂·dz, x̂ =
// (x − mean)·inv) and the batch norm's own sums of its output gradient g
// = dz·γ; then, in a second pass over dz and x, the batch norm's input
// gradient from g.
func (j *normSiLUGradJob) Run(_, lo, hi int) {
	p := j.p
	var u, gv [normChunk]float32
	n := float64(p.N * p.HW)
	for c := lo; c < hi; c++ {
		mean, inv := j.save[c], j.save[p.C+c]
		gc := j.gamma[c]
		sc, sh := normAffine(mean, inv, gc, j.beta[c])
		var sum, dot float64
		for b := 0; b < p.N; b++ {
			off, yo := p.Plane(b, c), (b*p.C+c)*p.HW
			for k := 0; k < p.HW; k += normChunk {
				w := min(normChunk, p.HW-k)
				xs, uu, dz := j.x[off+k:off+k+w], u[:w], j.dz[off+k:off+k+w]
				vmath.ScaleShift(uu, xs, sc, sh)
				vmath.SiLUGrad(dz, uu, j.dy[yo+k:yo+k+w])
				s, d := vmath.SumDot64(dz, xs, mean)
				sum, dot = sum+s, dot+d
			}
		}
		j.dbeta[c], j.dgamma[c] = float32(sum), float32(dot*float64(inv))
		g64 := float64(gc)
		k := float32(dot*g64/n) * inv * inv
		gm := float32(sum * g64 / n)
		for i := range gv {
			gv[i] = gc
		}
		for b := 0; b < p.N; b++ {
			off := p.Plane(b, c)
			for k0 := 0; k0 < p.HW; k0 += normChunk {
				w := min(normChunk, p.HW-k0)
				uu := u[:w]
				vmath.Binary(vmath.OpMul, uu, j.dz[off+k0:off+k0+w], gv[:w]) // g = dz·γ
				vmath.NormGrad(j.dx[off+k0:off+k0+w], uu, j.x[off+k0:off+k0+w], mean, k, gm, inv)
			}
		}
	}
}

// NormSiLUGrad implements NormSiLUer.
func (g *GoBackend) NormSiLUGrad(x, dy, gamma, beta, save, dz, dx, dgamma, dbeta Buf, p Norm) {
	g.j.normSiLUGd = normSiLUGradJob{x: g.bufs[x], dy: g.bufs[dy], gamma: g.bufs[gamma], beta: g.bufs[beta],
		save: g.bufs[save], dz: g.bufs[dz], dx: g.bufs[dx], dgamma: g.bufs[dgamma], dbeta: g.bufs[dbeta], p: p}
	g.pool.For(p.C, 1, &g.j.normSiLUGd)
}
