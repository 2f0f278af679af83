package vmath

// Element-wise arithmetic on float32 slices, each operation rounded as in
// Go (no fused multiply-add), eight floats at a time on amd64 with AVX2.

// Op is an element-wise operation of two slices.
type Op int

// The operations of Binary.
const (
	OpAdd Op = iota // a + b
	OpSub           // a − b
	OpMul           // a · b
)

// Binary writes a[i] op b[i] into o[i]; a and b must be at least as long
// as o, and o may be either of them (o += b is Binary(OpAdd, o, o, b)).
func Binary(op Op, o, a, b []float32) {
	a, b = a[:len(o)], b[:len(o)]
	k := 0
	if haveAVX2() && len(o) >= 8 {
		k = len(o) &^ 7
		binaryAVX2(int(op), &o[0], &a[0], &b[0], k)
	}
	for i := k; i < len(o); i++ {
		switch op {
		case OpAdd:
			o[i] = a[i] + b[i]
		case OpSub:
			o[i] = a[i] - b[i]
		default:
			o[i] = a[i] * b[i]
		}
	}
}

// ScaleShift writes a[i]·s + t into o[i] (the product rounded, then the
// sum); len(o) must be at least len(a).
func ScaleShift(o, a []float32, s, t float32) {
	o = o[:len(a)]
	k := 0
	if haveAVX2() && len(a) >= 8 {
		k = len(a) &^ 7
		scaleShiftAVX2(&o[0], &a[0], k, s, t)
	}
	for i := k; i < len(a); i++ {
		o[i] = float32(a[i]*s) + t // the conversion rounds: no fused multiply-add
	}
}

// Gather2 writes every second float of src into dst: dst[i] = src[2i];
// src must hold at least 2·len(dst) − 1 floats.
func Gather2(dst, src []float32) {
	if len(dst) == 0 {
		return
	}
	src = src[:2*len(dst)-1]
	k := 0
	if haveAVX2() {
		k = (len(dst) - 1) &^ 7 // each group of 8 reads 16 floats: the last float has one fewer after it
		if k > 0 {
			gather2AVX2(&dst[0], &src[0], k)
		}
	}
	for i := k; i < len(dst); i++ {
		dst[i] = src[2*i]
	}
}

// ScatterAdd2 adds src[i] into dst[2i], leaving the floats between
// untouched; dst must hold at least 2·len(src) − 1 floats.
func ScatterAdd2(dst, src []float32) {
	if len(src) == 0 {
		return
	}
	dst = dst[:2*len(src)-1]
	k := 0
	if haveAVX2() {
		k = (len(src) - 1) &^ 7 // each group of 8 touches 16 floats: the last one has one fewer after it
		if k > 0 {
			scatterAdd2AVX2(&dst[0], &src[0], k)
		}
	}
	for i := k; i < len(src); i++ {
		dst[2*i] += src[i]
	}
}
