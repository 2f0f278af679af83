// Package vmath holds the executor's passes over float32 slices that are
// worth vector instructions: SiLU and its gradient (one exponential per
// element, vmath.go), the batch norm's float64 sums, normalisation and
// gradient (stats.go), and element-wise arithmetic, stride-2 gathers and
// scatters (elem.go). On amd64 with AVX2 and FMA the slices go through
// assembly (vmath_amd64.s, stats_amd64.s), eight or sixteen floats at a
// time; elsewhere (and for the last few floats) through the same
// arithmetic in Go.
package vmath

import "math"

// Exp is e^x in float32 within 2 ulp (rel. 2.4e-7): x = n·ln 2 + r with
// |r| ≤ ln 2 / 2, e^r by its Taylor polynomial of degree 7, times 2^n
// written into the exponent. It has no branches, so that it inlines into
// loops: x is clamped to [-87.33, 88.72] (0 below becomes 2^-126, which
// 1 + e^-x cannot tell from 0; above, n = 128 writes +Inf), n is rounded
// to nearest by adding and subtracting 1.5·2^23, and NaN stays NaN (min
// and max keep it). The assembly computes the same steps with fused
// multiply-adds.
func Exp(x float32) float32 {
	const ln2hi, ln2lo, log2e, round = 0.693359375, -2.12194440e-4, 1.44269504088896341, 12582912
	x = min(max(x, -87.33), 88.72)
	n := x*log2e + round - round
	r := x - n*ln2hi - n*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// SiLU writes x·σ(x) = x / (1 + e^-x) into o[i] for each x = a[i];
// len(o) must be at least len(a).
func SiLU(o, a []float32) {
	o = o[:len(a)]
	k := 0
	if haveAVX2() && len(a) >= 8 {
		k = len(a) &^ 7
		siluAVX2(&o[0], &a[0], k)
	}
	siluGo(o[k:], a[k:])
}

// SiLUGrad writes g·σ(x)·(1 + x·(1 − σ(x))), SiLU's gradient at x = x[i]
// times g = g[i], into o[i]; x and g must be at least as long as o.
func SiLUGrad(o, x, g []float32) {
	x, g = x[:len(o)], g[:len(o)]
	k := 0
	if haveAVX2() && len(o) >= 8 {
		k = len(o) &^ 7
		siluGradAVX2(&o[0], &x[0], &g[0], k)
	}
	siluGradGo(o[k:], x[k:], g[k:])
}

func siluGo(o, a []float32) {
	o = o[:len(a)]
	for i, x := range a {
		o[i] = x / (1 + Exp(-x))
	}
}

func siluGradGo(o, x, g []float32) {
	x, g = x[:len(o)], g[:len(o)]
	for i, v := range x {
		s := 1 / (1 + Exp(-v))
		o[i] = g[i] * s * (1 + v*(1-s))
	}
}
