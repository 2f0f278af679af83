//go:build !amd64

package vmath

func sum64AVX2(v *float32, n int) float64 { panic("vmath: no vector sums on this architecture") }

func sqDev64AVX2(v *float32, n int, mean float32) float64 {
	panic("vmath: no vector sums on this architecture")
}

func sumDot64AVX2(dy, x *float32, n int, mean float32, sum, dot *float64) {
	panic("vmath: no vector sums on this architecture")
}

func normalizeAVX2(o, a *float32, n int, sub, mul float32) {
	panic("vmath: no vector normalisation on this architecture")
}

func normGradAVX2(o, dy, x *float32, n int, mean, k, gm, inv float32) {
	panic("vmath: no vector normalisation on this architecture")
}

func binaryAVX2(op int, o, a, b *float32, n int) {
	panic("vmath: no vector arithmetic on this architecture")
}

func scaleShiftAVX2(o, a *float32, n int, s, t float32) {
	panic("vmath: no vector arithmetic on this architecture")
}

func gather2AVX2(dst, src *float32, n int) { panic("vmath: no vector gather on this architecture") }

func scatterAdd2AVX2(dst, src *float32, n int) {
	panic("vmath: no vector scatter on this architecture")
}
