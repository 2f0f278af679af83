package exec

import "gpuwizard/trainer/exec/internal/vmath"

// A "same" convolution (stride 1, output as large as the input) reads,
// for column-matrix row (c, ky, kx), the image plane shifted by ky − pad
// rows and kx − pad columns: in the flat plane one shift by
// (ky − pad)·W + kx − pad. So one image's row of the columns is a single
// copy of the plane (and its gradient a single add), but for the
// columns that the shift wraps into the neighbouring row, which are
// zeros of the padding. im2colSame and col2imSame work so, a plane at a
// time, instead of row by row.

// same says whether p is a "same" convolution (stride 1, OH = H, OW = W).
func (p Conv) same() bool { return p.S() == 1 && p.OH == p.H && p.OW == p.W && p.Pad < p.W }

// sameSpan is where row (ky, kx) of a same convolution's columns reads
// its plane: column index d takes plane index d + off, for d in [a, b)
// (the rest of the image's P columns are padding; a = b = 0 when all
// are); s = kx − pad is the column shift (columns x with x + s outside
// 0..W-1 are padding too).
func sameSpan(p Conv, ky, kx int) (off, a, b, s int) {
	W, HW := p.W, p.H*p.W
	dy := ky - p.Pad
	s = kx - p.Pad
	off = dy*W + s
	oy0, oy1 := max(0, -dy), min(p.H, p.H-dy)
	a, b = max(oy0*W, -off), min(oy1*W, HW-off)
	if b <= a { // the shift leaves the plane: all padding
		return off, 0, 0, s
	}
	return off, a, b, s
}

// zeroEdges zeroes, in [a, b) of one image's columns, each output row's
// run of columns that a shift s wraps into the neighbouring row: the
// first −s columns (s < 0) or the last s (s > 0); a few floats a row, set
// in a loop (clear calls memclr).
func zeroEdges(img []float32, W, s, a, b int) {
	if s == 0 || a >= b {
		return
	}
	c0, c1 := 0, -s
	if s > 0 {
		c0, c1 = W-s, W
	}
	for r0 := a / W * W; r0 < b; r0 += W {
		for t := max(r0+c0, a); t < min(r0+c1, b); t++ {
			img[t] = 0
		}
	}
}

// im2colSame writes rows lo..hi-1 (c, ky, kx) of a same convolution's
// columns.
func im2colSame(X, C []float32, p Conv, lo, hi int) {
	P, NP, HW := p.PDim(), p.N*p.PDim(), p.H*p.W
	for r := lo; r < hi; r++ {
		c, ky, kx := r/(p.K*p.K), r/p.K%p.K, r%p.K
		off, a, b, s := sameSpan(p, ky, kx)
		for n := 0; n < p.N; n++ {
			img := C[r*NP+n*P:][:P]
			plane := X[(n*p.C+c)*HW:][:HW]
			clear(img[:a])
			copy(img[a:b], plane[a+off:b+off])
			clear(img[b:])
			zeroEdges(img, p.W, s, a, b)
		}
	}
}

// col2imSame adds a same convolution's columns into the image planes
// lo..hi-1 (n·C + c; cleared by the caller). The columns that the shift
// wraps are set to zero first: C is scratch to its callers.
func col2imSame(C, X []float32, p Conv, lo, hi int) {
	P, NP, HW := p.PDim(), p.N*p.PDim(), p.H*p.W
	for nc := lo; nc < hi; nc++ {
		n, c := nc/p.C, nc%p.C
		plane := X[nc*HW:][:HW]
		for ky := 0; ky < p.K; ky++ {
			for kx := 0; kx < p.K; kx++ {
				off, a, b, s := sameSpan(p, ky, kx)
				img := C[((c*p.K+ky)*p.K+kx)*NP+n*P:][:P]
				if a == b {
					continue
				}
				zeroEdges(img, p.W, s, a, b)
				dst := plane[a+off : b+off]
				vmath.Binary(vmath.OpAdd, dst, dst, img[a:b])
			}
		}
	}
}
