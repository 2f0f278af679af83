// Package sgemm is the CPU backend's SGEMM: an AVX2/FMA micro-kernel in
// assembly on 4×16 tiles with packing, used where the CPU has those
// instructions (a separate package: Go assembly cannot live beside cgo).
package sgemm

import (
	"runtime"
	"sync"
)

// Available says whether this CPU runs the micro-kernel.
func Available() bool { return haveKernel() }

// Gemm holds packing space between calls; use one per goroutine.
type Gemm struct {
	packA []float32   // op(A) in 4-row panels
	work  []*gemmWork // per-worker packing space
}

// gemmWork is one worker's packing space.
type gemmWork struct {
	b    []float32 // a packed 16-column panel of op(B), k×16
	edge [64]float32
}

// Run computes C (m×n) = op(A)·op(B) + beta·C, row-major, with the
// AVX2/FMA micro-kernel on 4×16 tiles: op(A) is packed in 4-row panels,
// op(B) read in place when it is row-major and the panel is whole, packed
// otherwise. Column panels are shared out to one goroutine per thread.
// It panics where Available is false.
func (g *Gemm) Run(ta, tb bool, m, n, k int, A, B, C []float32, beta float32) {
	C = C[:m*n]
	switch beta {
	case 0:
		clear(C)
	case 1:
	default:
		for i := range C {
			C[i] *= beta
		}
	}
	if k == 0 || m == 0 || n == 0 {
		return
	}
	mp := (m + 3) / 4
	if cap(g.packA) < mp*4*k {
		g.packA = make([]float32, mp*4*k)
	}
	ap := g.packA[:mp*4*k]
	if m%4 != 0 {
		clear(ap[(mp-1)*4*k:])
	}
	if ta { // op(A) row i is column i of A: read rows of A
		for kk := 0; kk < k; kk++ {
			row := A[kk*m : (kk+1)*m]
			for i, v := range row {
				ap[(i/4)*4*k+kk*4+i%4] = v
			}
		}
	} else {
		for i := 0; i < m; i++ {
			panel := ap[(i/4)*4*k : (i/4+1)*4*k]
			for kk, v := range A[i*k : (i+1)*k] {
				panel[kk*4+i%4] = v
			}
		}
	}
	np := (n + 15) / 16
	workers := min(runtime.GOMAXPROCS(0), np, 16)
	for len(g.work) < workers {
		g.work = append(g.work, &gemmWork{})
	}
	// k is cut in chunks of kc so that a packed B panel (16×kc) stays in
	// the first-level cache while every A panel streams past it.
	const kc = 256
	column := func(w *gemmWork, q int) {
		j0 := q * 16
		width := min(16, n-j0)
		inPlace := !tb && width == 16
		if !inPlace && cap(w.b) < 16*kc {
			w.b = make([]float32, 16*kc)
		}
		for k0 := 0; k0 < k; k0 += kc {
			kl := min(kc, k-k0)
			var bp *float32
			ldb := n
			if inPlace {
				bp = &B[k0*n+j0]
			} else {
				pb := w.b[:16*kl]
				if width < 16 {
					clear(pb)
				}
				if tb { // op(B) column j is row j of B
					for jj := 0; jj < width; jj++ {
						row := B[(j0+jj)*k+k0 : (j0+jj)*k+k0+kl]
						for kk, v := range row {
							pb[kk*16+jj] = v
						}
					}
				} else {
					for kk := 0; kk < kl; kk++ {
						copy(pb[kk*16:kk*16+width], B[(k0+kk)*n+j0:(k0+kk)*n+j0+width])
					}
				}
				bp, ldb = &pb[0], 16
			}
			for p := 0; p < mp; p++ {
				i0 := p * 4
				h := min(4, m-i0)
				ak := &ap[p*4*k+k0*4]
				if h == 4 && width == 16 {
					kernel4x16(kl, ak, bp, ldb, &C[i0*n+j0], n)
					continue
				}
				w.edge = [64]float32{}
				kernel4x16(kl, ak, bp, ldb, &w.edge[0], 16)
				for ii := 0; ii < h; ii++ {
					dst := C[(i0+ii)*n+j0:][:width]
					for jj := range dst {
						dst[jj] += w.edge[ii*16+jj]
					}
				}
			}
		}
	}
	if workers <= 1 {
		for q := 0; q < np; q++ {
			column(g.work[0], q)
		}
		return
	}
	var wg sync.WaitGroup
	for wi := 0; wi < workers; wi++ {
		wg.Add(1)
		go func(w *gemmWork, first int) {
			defer wg.Done()
			for q := first; q < np; q += workers {
				column(w, q)
			}
		}(g.work[wi], wi)
	}
	wg.Wait()
}
