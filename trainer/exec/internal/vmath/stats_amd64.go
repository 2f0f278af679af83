package vmath

// sum64AVX2 is Σ v[i] in float64 for i < n (n a multiple of 16).
//
//go:noescape
func sum64AVX2(v *float32, n int) float64

// sqDev64AVX2 is Σ (v[i]−mean)² in float64 for i < n (n a multiple of 16).
//
//go:noescape
func sqDev64AVX2(v *float32, n int, mean float32) float64

// sumDot64AVX2 sets *sum = Σ dy[i], *dot = Σ (x[i]−mean)·dy[i] in float64
// for i < n (n a multiple of 16).
//
//go:noescape
func sumDot64AVX2(dy, x *float32, n int, mean float32, sum, dot *float64)

// normalizeAVX2 writes (a[i]−sub)·mul into o[i] for i < n (n a multiple
// of 16).
//
//go:noescape
func normalizeAVX2(o, a *float32, n int, sub, mul float32)

// normGradAVX2 writes (dy[i] − (x[i]−mean)·k − gm)·inv into o[i] for
// i < n (n a multiple of 16).
//
//go:noescape
func normGradAVX2(o, dy, x *float32, n int, mean, k, gm, inv float32)

// binaryAVX2 writes a[i] op b[i] into o[i] for i < n (n a multiple of 8;
// op an Op).
//
//go:noescape
func binaryAVX2(op int, o, a, b *float32, n int)

// scaleShiftAVX2 writes a[i]·s + t into o[i] for i < n (n a multiple of 8).
//
//go:noescape
func scaleShiftAVX2(o, a *float32, n int, s, t float32)

// gather2AVX2 writes src[2i] into dst[i] for i < n (n a multiple of 8;
// reads src[0:2n]).
//
//go:noescape
func gather2AVX2(dst, src *float32, n int)

// scatterAdd2AVX2 adds src[i] into dst[2i] for i < n (n a multiple of 8;
// reads and writes dst[0:2n], the odd floats unchanged).
//
//go:noescape
func scatterAdd2AVX2(dst, src *float32, n int)
