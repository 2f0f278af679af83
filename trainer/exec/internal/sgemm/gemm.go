// Package sgemm is the CPU backend's SGEMM: AVX2/FMA micro-kernels in
// assembly on 6×16 and 4×16 tiles with packing, used where the CPU has those
// instructions (a separate package: Go assembly cannot live beside cgo).
package sgemm

import (
	"gpuwizard/trainer/exec/internal/par"
)

// Available says whether this CPU runs the micro-kernel.
func Available() bool { return haveKernel() }

// Gemm holds packing space between calls; one product runs at a time.
type Gemm struct {
	packA []float32   // op(A) in panels of 6 and 4 rows (see panels)
	work  []*gemmWork // per-goroutine packing space
	pack  packJob
	cols  colJob
	dot   dotJob
	only4 bool // 4-row panels only (a test's reference)
}

// dotK is the k from which A·Bᵀ runs as dot products (dot4x3) instead of
// packing B: a convolution's filter gradient (16×150 with k = 6,400 at
// batch 64) spent most of its time transposing B into panels.
const dotK = 256

// dotJob computes C = A·Bᵀ (+ beta·C) in 4×3 tiles of dot products along
// k, one tile per item, down C's columns of tiles (neighbouring items
// read the same three rows of B: a filter gradient's B, the columns, is
// the larger operand); edge tiles repeat a row and drop its results.
type dotJob struct {
	m, n, k int
	tilesM  int
	a, b, c []float32
	beta    float32
}

func (j *dotJob) Run(_, lo, hi int) {
	m, n, k := j.m, j.n, j.k
	k8 := k / 8
	for t := lo; t < hi; t++ {
		i0, j0 := t%j.tilesM*4, t/j.tilesM*3
		var ar [4]*float32
		var br [3]*float32
		for ii := range ar {
			ar[ii] = &j.a[min(i0+ii, m-1)*k]
		}
		for jj := range br {
			br[jj] = &j.b[min(j0+jj, n-1)*k]
		}
		var out [12]float32
		dot4x3(k8, ar[0], ar[1], ar[2], ar[3], br[0], br[1], br[2], &out)
		for ii := 0; ii < min(4, m-i0); ii++ {
			arow := j.a[(i0+ii)*k : (i0+ii+1)*k]
			for jj := 0; jj < min(3, n-j0); jj++ {
				brow := j.b[(j0+jj)*k : (j0+jj+1)*k]
				s := out[3*ii+jj]
				for kk := 8 * k8; kk < k; kk++ {
					s += arow[kk] * brow[kk]
				}
				dst := &j.c[(i0+ii)*n+j0+jj]
				if j.beta != 0 {
					s += j.beta * *dst
				}
				*dst = s
			}
		}
	}
}

// gemmWork is one goroutine's packing space.
type gemmWork struct {
	b    []float32 // a packed 16-column panel of op(B), k×16
	edge [96]float32
}

// k is cut in chunks of kc so that a packed B panel (16×kc) stays in the
// first-level cache while every A panel streams past it.
const kc = 256

// layout is how op(A) is packed: full panels of h rows (6: kernel6x16;
// 4 where a test asks for the smaller kernel alone), then, when m is not
// a multiple of h, one tail panel of four rows (up to four rows left:
// kernel4x16) or six, zero-padded. Every panel before row i0 is whole, so
// the panel at row i0 starts at i0·k in the packing.
type layout struct{ h, full, tail int }

func layoutOf(m, h int) layout {
	l := layout{h: h, full: m / h}
	switch r := m % h; {
	case r == 0:
	case r <= 4:
		l.tail = 4
	default:
		l.tail = 6
	}
	return l
}

// panels is the number of panels.
func (l layout) panels() int { return l.full + min(l.tail, 1) }

// at is panel p's first row and height.
func (l layout) at(p int) (i0, h int) {
	if p < l.full {
		return l.h * p, l.h
	}
	return l.h * l.full, l.tail
}

// rows is the packing's height, padding included.
func (l layout) rows() int { return l.h*l.full + l.tail }

// packJob packs op(A) into panels (see panels), one panel per item.
type packJob struct {
	ta      bool
	m, k    int
	lay     layout
	a, pack []float32
}

func (j *packJob) Run(_, lo, hi int) {
	m, k := j.m, j.k
	for p := lo; p < hi; p++ {
		i0, ph := j.lay.at(p)
		panel := j.pack[i0*k : (i0+ph)*k]
		h := min(ph, m-i0)
		if h < ph {
			clear(panel)
		}
		if j.ta { // op(A) row i is column i of A: h floats in a row of A
			for kk := 0; kk < k; kk++ {
				copy(panel[kk*ph:kk*ph+h], j.a[kk*m+i0:kk*m+i0+h])
			}
			continue
		}
		for ii := 0; ii < h; ii++ {
			i := i0 + ii
			for kk, v := range j.a[i*k : (i+1)*k] {
				panel[kk*ph+ii] = v
			}
		}
	}
}

// colJob computes 16-column panels of C, one panel per item.
type colJob struct {
	g       *Gemm
	lay     layout
	tb      bool
	m, n, k int
	b, c    []float32
	beta    float32
}

func (j *colJob) Run(w, lo, hi int) {
	for q := lo; q < hi; q++ {
		j.column(j.g.work[w], q)
	}
}

func (j *colJob) column(w *gemmWork, q int) {
	m, n, k, C := j.m, j.n, j.k, j.c
	j0 := q * 16
	width := min(16, n-j0)
	// With beta 0 the first k chunk writes this panel of C without
	// reading it (no clearing pass); otherwise C is scaled by beta first
	// and every chunk adds.
	set := j.beta == 0 && k > 0
	if !set && j.beta != 1 {
		for i := 0; i < m; i++ {
			row := C[i*n+j0 : i*n+j0+width]
			if j.beta == 0 {
				clear(row)
				continue
			}
			for t := range row {
				row[t] *= j.beta
			}
		}
	}
	if k == 0 {
		return
	}
	// B is read in place only for one panel of A: its rows lie a whole
	// row of B apart (often a multiple of 4 KiB: a convolution's columns
	// of 1,024 positions), so a panel's 256 rows fall in a few cache
	// sets and would be fetched again for every panel of A.
	inPlace := !j.tb && width == 16 && m <= 4
	if !inPlace && cap(w.b) < 16*kc {
		w.b = make([]float32, 16*kc)
	}
	for k0 := 0; k0 < k; k0 += kc {
		kl := min(kc, k-k0)
		bp, ldb := j.panelB(w, k0, kl, j0, width, inPlace)
		acc := 1
		if set && k0 == 0 {
			acc = 0
		}
		j.rows(w, k0, kl, j0, width, bp, ldb, acc)
	}
}

// panelB is op(B)'s rows k0..k0+kl-1 of the 16-column panel at j0: in
// place when B is row-major and the panel whole, else packed into w.b
// (row stride 16).
func (j *colJob) panelB(w *gemmWork, k0, kl, j0, width int, inPlace bool) (*float32, int) {
	B, n, k := j.b, j.n, j.k
	if inPlace {
		return &B[k0*n+j0], n
	}
	pb := w.b[:16*kl]
	if width < 16 {
		clear(pb)
	}
	if j.tb { // op(B) column j is row j of B
		for jj := 0; jj < width; jj++ {
			row := B[(j0+jj)*k+k0 : (j0+jj)*k+k0+kl]
			for kk, v := range row {
				pb[kk*16+jj] = v
			}
		}
	} else if width == 16 {
		_ = B[(k0+kl-1)*n+j0+15] // the panel's last float
		pack16(kl, &B[k0*n+j0], n, &pb[0])
	} else {
		for kk := 0; kk < kl; kk++ {
			copy(pb[kk*16:kk*16+width], B[(k0+kk)*n+j0:(k0+kk)*n+j0+width])
		}
	}
	return &pb[0], 16
}

// rows runs the micro-kernels down the panel's tiles of 6 (or 4) rows for
// one k chunk: acc 0 writes C, 1 adds to it. Edge tiles go through w.edge.
func (j *colJob) rows(w *gemmWork, k0, kl, j0, width int, bp *float32, ldb, acc int) {
	m, n, k, C := j.m, j.n, j.k, j.c
	for p := range j.lay.panels() {
		i0, ph := j.lay.at(p)
		h := min(ph, m-i0)
		ak := &j.g.packA[i0*k+k0*ph]
		kernel := kernel6x16
		if ph == 4 {
			kernel = kernel4x16
		}
		if h == ph && width == 16 {
			kernel(kl, ak, bp, ldb, &C[i0*n+j0], n, acc)
			continue
		}
		kernel(kl, ak, bp, ldb, &w.edge[0], 16, 0)
		for ii := 0; ii < h; ii++ {
			dst := C[(i0+ii)*n+j0:][:width]
			if acc == 0 {
				copy(dst, w.edge[ii*16:ii*16+width])
				continue
			}
			for jj := range dst {
				dst[jj] += w.edge[ii*16+jj]
			}
		}
	}
}

// Run computes C (m×n) = op(A)·op(B) + beta·C, row-major, with the
// AVX2/FMA micro-kernels on 6×16 and 4×16 tiles: op(A) is packed in panels of 6 rows,
// op(B) in 16-column panels (read in place when A is one panel). The
// panels are shared out through pool; nothing is allocated once the
// packing space has grown. It panics where Available is false.
func (g *Gemm) Run(pool *par.Pool, ta, tb bool, m, n, k int, A, B, C []float32, beta float32) {
	if m == 0 || n == 0 {
		return
	}
	if !ta && tb && k >= dotK {
		tilesM := (m + 3) / 4
		g.dot = dotJob{m: m, n: n, k: k, tilesM: tilesM, a: A[:m*k], b: B[:n*k], c: C[:m*n], beta: beta}
		pool.For(tilesM*((n+2)/3), 1, &g.dot)
		g.dot = dotJob{}
		return
	}
	// Six-row panels unless they pad more rows than four-row ones (m =
	// 32: 36 rows against 32; the 6-row kernel gains less than that).
	lay := layoutOf(m, 6)
	if l4 := layoutOf(m, 4); g.only4 || l4.rows() < lay.rows() {
		lay = l4
	}
	if need := lay.rows() * k; cap(g.packA) < need {
		g.packA = make([]float32, need)
	}
	g.packA = g.packA[:cap(g.packA)]
	for len(g.work) < par.Threads() {
		g.work = append(g.work, &gemmWork{})
	}
	g.pack = packJob{ta: ta, m: m, k: k, lay: lay, a: A, pack: g.packA}
	pool.For(lay.panels(), max(1, 4096/max(6*k, 1)), &g.pack)
	g.cols = colJob{g: g, lay: lay, tb: tb, m: m, n: n, k: k, b: B, c: C[:m*n], beta: beta}
	// Whole runs of neighbouring panels per chunk: goroutines writing
	// interleaved 64-byte panels of C fight over cache lines.
	np := (n + 15) / 16
	pool.For(np, max(1, np/(4*par.Threads())), &g.cols)
	g.cols, g.pack = colJob{}, packJob{}
}
