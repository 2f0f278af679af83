package exec

import (
	"fmt"
	"math/rand"
	"testing"
)

// naiveIm2col and naiveCol2im are the definitions, element by element.
func naiveIm2col(X []float32, p Conv) []float32 {
	P, NP, s := p.PDim(), p.N*p.PDim(), p.S()
	C := make([]float32, p.KDim()*NP)
	for c := 0; c < p.C; c++ {
		for ky := 0; ky < p.K; ky++ {
			for kx := 0; kx < p.K; kx++ {
				r := (c*p.K+ky)*p.K + kx
				for n := 0; n < p.N; n++ {
					for oy := 0; oy < p.OH; oy++ {
						for ox := 0; ox < p.OW; ox++ {
							iy, ix := oy*s+ky-p.Pad, ox*s+kx-p.Pad
							if iy >= 0 && iy < p.H && ix >= 0 && ix < p.W {
								C[r*NP+n*P+oy*p.OW+ox] = X[((n*p.C+c)*p.H+iy)*p.W+ix]
							}
						}
					}
				}
			}
		}
	}
	return C
}

func naiveCol2im(C []float32, p Conv) []float32 {
	P, NP, s := p.PDim(), p.N*p.PDim(), p.S()
	X := make([]float32, p.N*p.C*p.H*p.W)
	for n := 0; n < p.N; n++ {
		for c := 0; c < p.C; c++ {
			for ky := 0; ky < p.K; ky++ {
				for kx := 0; kx < p.K; kx++ {
					r := (c*p.K+ky)*p.K + kx
					for oy := 0; oy < p.OH; oy++ {
						for ox := 0; ox < p.OW; ox++ {
							iy, ix := oy*s+ky-p.Pad, ox*s+kx-p.Pad
							if iy >= 0 && iy < p.H && ix >= 0 && ix < p.W {
								X[((n*p.C+c)*p.H+iy)*p.W+ix] += C[r*NP+n*P+oy*p.OW+ox]
							}
						}
					}
				}
			}
		}
	}
	return X
}

// TestIm2colCol2im: the unfolding and its adjoint against their
// definitions, bit for bit (the adjoint adds in the same order), for
// "same" convolutions (the plane-at-a-time path: 1×1, 3×3, 5×5, planes
// narrower than the kernel) and others (no padding, strides 2 and 3;
// stride 2 on rows long enough for the vector gather and scatter).
func TestIm2colCol2im(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct{ n, ch, h, w, k, pad, s int }{
		{2, 3, 5, 7, 3, 1, 1}, {1, 2, 8, 8, 1, 0, 1}, {2, 1, 6, 5, 5, 2, 1}, {1, 2, 1, 1, 3, 1, 1},
		{1, 1, 2, 3, 5, 2, 1}, {3, 2, 16, 16, 3, 1, 1}, {2, 2, 7, 6, 3, 0, 1}, {2, 3, 9, 8, 3, 1, 2},
		{1, 2, 10, 11, 3, 1, 3}, {2, 1, 4, 4, 2, 0, 1}, {2, 2, 40, 37, 3, 1, 2}, {1, 1, 64, 64, 3, 1, 2},
	} {
		p := Conv{N: c.n, C: c.ch, H: c.h, W: c.w, O: 1, K: c.k, Pad: c.pad, Stride: c.s}
		p.OH, p.OW = (c.h+2*c.pad-c.k)/c.s+1, (c.w+2*c.pad-c.k)/c.s+1
		name := fmt.Sprintf("%d×%d×%d×%d k%d pad %d stride %d (same %v)", c.n, c.ch, c.h, c.w, c.k, c.pad, c.s, p.same())
		X := make([]float32, c.n*c.ch*c.h*c.w)
		for i := range X {
			X[i] = float32(rng.NormFloat64())
		}
		C := make([]float32, p.KDim()*p.N*p.PDim())
		for i := range C {
			C[i] = 99 // every entry must be written
		}
		Im2colCPU(X, C, p)
		for i, v := range naiveIm2col(X, p) {
			if C[i] != v {
				t.Fatalf("%s: im2col column entry %d = %v, want %v", name, i, C[i], v)
			}
		}
		for i := range C {
			C[i] = float32(rng.NormFloat64())
		}
		want := naiveCol2im(C, p)
		got := make([]float32, len(X))
		for i := range got {
			got[i] = 99 // cleared first
		}
		Col2imCPU(C, got, p)
		for i, v := range want {
			if got[i] != v {
				t.Fatalf("%s: col2im image entry %d = %v, want %v", name, i, got[i], v)
			}
		}
	}
}
