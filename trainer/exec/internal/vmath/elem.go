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
// as o.
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
