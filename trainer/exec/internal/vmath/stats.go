package vmath

// The batch norm's passes over a channel's values: sums in float64 (a
// channel of a batch holds up to millions of values: float32 sums would
// drift by about as many ulps), the normalisation and its gradient in
// float32 with the same operations, in the same order, as the Go code. On
// amd64 with AVX2 and FMA the slices go through assembly, sixteen floats
// at a time; elsewhere (and for the last few floats) through Go.

// Sum64 is Σ v[i] in float64.
func Sum64(v []float32) float64 {
	var s float64
	k := 0
	if haveAVX2() && len(v) >= 16 {
		k = len(v) &^ 15
		s = sum64AVX2(&v[0], k)
	}
	return s + sum64Go(v[k:])
}

// SqDev64 is Σ (v[i]−mean)² in float64, the difference taken in float32.
func SqDev64(v []float32, mean float32) float64 {
	var s float64
	k := 0
	if haveAVX2() && len(v) >= 16 {
		k = len(v) &^ 15
		s = sqDev64AVX2(&v[0], k, mean)
	}
	for _, x := range v[k:] {
		d := float64(x - mean)
		s += d * d
	}
	return s
}

// SumDot64 is Σ g[i] and Σ (x[i]−mean)·g[i] in float64, the difference
// taken in float32; x must be at least as long as g.
func SumDot64(g, x []float32, mean float32) (sum, dot float64) {
	x = x[:len(g)]
	k := 0
	if haveAVX2() && len(g) >= 16 {
		k = len(g) &^ 15
		sumDot64AVX2(&g[0], &x[0], k, mean, &sum, &dot)
	}
	for i, v := range g[k:] {
		sum += float64(v)
		dot += float64(x[k+i]-mean) * float64(v)
	}
	return sum, dot
}

// Normalize writes (a[i]−sub)·mul into o[i]; len(o) must be at least len(a).
func Normalize(o, a []float32, sub, mul float32) {
	o = o[:len(a)]
	k := 0
	if haveAVX2() && len(a) >= 16 {
		k = len(a) &^ 15
		normalizeAVX2(&o[0], &a[0], k, sub, mul)
	}
	for i, v := range a[k:] {
		o[k+i] = (v - sub) * mul
	}
}

// NormGrad writes the batch norm's input gradient, (g[i] − (x[i]−mean)·k
// − gm)·inv, into o[i]; g and x must be at least as long as o.
func NormGrad(o, g, x []float32, mean, k, gm, inv float32) {
	g, x = g[:len(o)], x[:len(o)]
	n := 0
	if haveAVX2() && len(o) >= 16 {
		n = len(o) &^ 15
		normGradAVX2(&o[0], &g[0], &x[0], n, mean, k, gm, inv)
	}
	for i, dy := range g[n:] {
		o[n+i] = (dy - float32((x[n+i]-mean)*k) - gm) * inv // no fused multiply-add
	}
}

func sum64Go(v []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += float64(v[i])
		s1 += float64(v[i+1])
		s2 += float64(v[i+2])
		s3 += float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i])
	}
	return (s0 + s1) + (s2 + s3)
}
