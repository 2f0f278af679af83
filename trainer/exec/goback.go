package exec

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/math32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"gpuwizard/trainer/exec/internal/sgemm"
	"gpuwizard/trainer/optim"
)

// GoBackend runs the kernels on the CPU in Go. It is the reference the CUDA
// backend is tested against.
type GoBackend struct {
	bufs    [][]float32
	gemm    sgemm.Gemm
	generic bool // use gonum's SGEMM even where the AVX2 kernel runs
}

// NewGoBackend returns an empty CPU backend.
func NewGoBackend() *GoBackend { return &GoBackend{} }

// UseGonumGEMM makes the backend use gonum's SGEMM even on CPUs with AVX2
// and FMA (tests and benchmarks compare the two).
func (g *GoBackend) UseGonumGEMM() { g.generic = true }

// Name implements Backend.
func (g *GoBackend) Name() string { return "cpu" }

// Alloc implements Backend.
func (g *GoBackend) Alloc(n int) (Buf, error) {
	if n < 0 {
		return NoBuf, fmt.Errorf("%w: negative buffer size %d", ErrExec, n)
	}
	g.bufs = append(g.bufs, make([]float32, n))
	return Buf(len(g.bufs) - 1), nil
}

// Data exposes a buffer's memory (tests and the CPU trainer read it
// without a copy).
func (g *GoBackend) Data(b Buf) []float32 { return g.bufs[b] }

// Close implements Backend.
func (g *GoBackend) Close() error { g.bufs = nil; return nil }

// Upload implements Backend.
func (g *GoBackend) Upload(dst Buf, src []float32) { copy(g.bufs[dst], src) }

// Download implements Backend.
func (g *GoBackend) Download(dst []float32, src Buf) error {
	copy(dst, g.bufs[src])
	return nil
}

// Err implements Backend: the Go kernels cannot fail.
func (g *GoBackend) Err() error { return nil }

// Fill implements Backend.
func (g *GoBackend) Fill(dst Buf, n int, v float32) {
	d := g.bufs[dst][:n]
	for i := range d {
		d[i] = v
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// Binary implements Backend.
func (g *GoBackend) Binary(op BinOp, a, b, out Buf, n int, aScalar, bScalar bool) {
	A, B, O := g.bufs[a], g.bufs[b], g.bufs[out][:n]
	switch {
	case aScalar && bScalar:
		O[0] = binop(op, A[0], B[0])
	case bScalar:
		s := B[0]
		A = A[:n]
		switch op {
		case OpAdd:
			for i, x := range A {
				O[i] = x + s
			}
		case OpMul:
			for i, x := range A {
				O[i] = x * s
			}
		case OpDiv:
			for i, x := range A {
				O[i] = x / s
			}
		case OpGE:
			for i, x := range A {
				O[i] = b2f(x >= s)
			}
		default:
			for i, x := range A {
				O[i] = binop(op, x, s)
			}
		}
	case aScalar:
		s := A[0]
		for i, y := range B[:n] {
			O[i] = binop(op, s, y)
		}
	default:
		A, B = A[:n], B[:n]
		switch op {
		case OpAdd:
			for i := range O {
				O[i] = A[i] + B[i]
			}
		case OpSub:
			for i := range O {
				O[i] = A[i] - B[i]
			}
		case OpMul:
			for i := range O {
				O[i] = A[i] * B[i]
			}
		default:
			for i := range O {
				O[i] = binop(op, A[i], B[i])
			}
		}
	}
}

func binop(op BinOp, x, y float32) float32 {
	switch op {
	case OpAdd:
		return x + y
	case OpSub:
		return x - y
	case OpMul:
		return x * y
	case OpDiv:
		return x / y
	case OpGE:
		return b2f(x >= y)
	case OpGT:
		return b2f(x > y)
	case OpLE:
		return b2f(x <= y)
	case OpLT:
		return b2f(x < y)
	}
	return float32(math.NaN())
}

// Unary implements Backend.
func (g *GoBackend) Unary(op UnOp, a, out Buf, n int) {
	A, O := g.bufs[a][:n], g.bufs[out][:n]
	for i, x := range A {
		switch op {
		case OpNeg:
			O[i] = -x
		case OpExp:
			O[i] = math32.Exp(x)
		case OpLog:
			O[i] = math32.Log(x)
		case OpSqrt:
			O[i] = math32.Sqrt(x)
		case OpSquare:
			O[i] = x * x
		case OpAbs:
			O[i] = math32.Abs(x)
		}
	}
}

// Gemm implements Backend: with the AVX2/FMA kernel (package sgemm) where the
// CPU has it, else with gonum's SGEMM kernels, called on tiles of C
// small enough for gonum's serial path: its own parallel path starts one
// goroutine per 64×64 block, and the hand-offs cost more than the blocks
// of LeNet-sized products (with one thread, most of the time went to
// futex wake-ups). The tiles are shared out to one goroutine per thread.
func (g *GoBackend) Gemm(transA, transB bool, m, n, k int, a, b, c Buf, beta float32) {
	A, B, C := g.bufs[a], g.bufs[b], g.bufs[c]
	if !g.generic && sgemm.Available() {
		g.gemm.Run(transA, transB, m, n, k, A, B, C, beta)
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	const tm, tn = 64, 128 // 2 of gonum's blocks: below its parallel threshold
	impl := blas32.Implementation()
	tile := func(i, j int) {
		mi, nj := min(tm, m-i), min(tn, n-j)
		ao := i * lda
		if transA {
			ao = i
		}
		bo := j
		if transB {
			bo = j * ldb
		}
		impl.Sgemm(ta, tb, mi, nj, k, 1, A[ao:], lda, B[bo:], ldb, beta, C[i*n+j:], n)
	}
	rows, cols := (m+tm-1)/tm, (n+tn-1)/tn
	workers := min(runtime.GOMAXPROCS(0), rows*cols)
	if workers <= 1 {
		for i := 0; i < m; i += tm {
			for j := 0; j < n; j += tn {
				tile(i, j)
			}
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for t := w; t < rows*cols; t += workers {
				tile(t/cols*tm, t%cols*tn)
			}
		}(w)
	}
	wg.Wait()
}

// Repeat implements Backend.
func (g *GoBackend) Repeat(in, out Buf, outer, rep, inner int) {
	I, O := g.bufs[in], g.bufs[out]
	for o := 0; o < outer; o++ {
		src := I[o*inner : (o+1)*inner]
		for r := 0; r < rep; r++ {
			copy(O[(o*rep+r)*inner:], src)
		}
	}
}

// Sum implements Backend.
func (g *GoBackend) Sum(in, out Buf, outer, red, inner int) {
	I, O := g.bufs[in], g.bufs[out]
	for o := 0; o < outer; o++ {
		dst := O[o*inner : (o+1)*inner]
		if inner == 1 {
			var s float32
			for _, v := range I[o*red : (o+1)*red] {
				s += v
			}
			dst[0] = s
			continue
		}
		copy(dst, I[o*red*inner:])
		for r := 1; r < red; r++ {
			src := I[(o*red+r)*inner:][:inner]
			for i, v := range src {
				dst[i] += v
			}
		}
	}
}

// Softmax implements Backend.
func (g *GoBackend) Softmax(in, out Buf, rows, cols int, log bool) {
	I, O := g.bufs[in], g.bufs[out]
	for r := 0; r < rows; r++ {
		x, y := I[r*cols:(r+1)*cols], O[r*cols:(r+1)*cols]
		mx := x[0]
		for _, v := range x[1:] {
			mx = max(mx, v)
		}
		var sum float32
		for i, v := range x {
			e := math32.Exp(v - mx)
			sum += e
			if log {
				y[i] = v - mx
			} else {
				y[i] = e
			}
		}
		if log {
			ls := math32.Log(sum)
			for i := range y {
				y[i] -= ls
			}
		} else {
			for i := range y {
				y[i] /= sum
			}
		}
	}
}

// SoftmaxGrad implements Backend.
func (g *GoBackend) SoftmaxGrad(y, gr, out Buf, rows, cols int, log bool) {
	Y, G, O := g.bufs[y], g.bufs[gr], g.bufs[out]
	for r := 0; r < rows; r++ {
		yy, gg, dx := Y[r*cols:(r+1)*cols], G[r*cols:(r+1)*cols], O[r*cols:(r+1)*cols]
		var s float32
		if log {
			for _, v := range gg {
				s += v
			}
			for i := range dx {
				dx[i] = gg[i] - math32.Exp(yy[i])*s
			}
			continue
		}
		for i := range gg {
			s += yy[i] * gg[i]
		}
		for i := range dx {
			dx[i] = (gg[i] - s) * yy[i]
		}
	}
}

// MaxPool implements Backend. Ties go to the first element of the window
// in row-major order, as in gorgonia.
func (g *GoBackend) MaxPool(in, out, idx Buf, p Pool) {
	I, O, X := g.bufs[in], g.bufs[out], g.bufs[idx]
	if p.KH == 2 && p.KW == 2 && p.SH == 2 && p.SW == 2 && p.OH*2 <= p.H && p.OW*2 <= p.W {
		maxPool2x2(I, O, X, p)
		return
	}
	for plane := 0; plane < p.N*p.C; plane++ {
		src := I[plane*p.H*p.W:][:p.H*p.W]
		dst := O[plane*p.OH*p.OW:][:p.OH*p.OW]
		ix := X[plane*p.OH*p.OW:][:p.OH*p.OW]
		for oy := 0; oy < p.OH; oy++ {
			for ox := 0; ox < p.OW; ox++ {
				best, at := float32(-math.MaxFloat32), -1
				y0, x0 := oy*p.SH, ox*p.SW
				for ky := 0; ky < p.KH && y0+ky < p.H; ky++ {
					row := src[(y0+ky)*p.W:]
					for kx := 0; kx < p.KW && x0+kx < p.W; kx++ {
						if v := row[x0+kx]; v > best {
							best, at = v, ky*p.KW+kx
						}
					}
				}
				dst[oy*p.OW+ox], ix[oy*p.OW+ox] = best, float32(at)
			}
		}
	}
}

// maxPool2x2 is MaxPool for the common 2×2 window with stride 2 whose
// windows all lie inside the image: the same first-wins order, without the
// general loop's bounds.
func maxPool2x2(I, O, X []float32, p Pool) {
	for plane := 0; plane < p.N*p.C; plane++ {
		src := I[plane*p.H*p.W:][:p.H*p.W]
		dst := O[plane*p.OH*p.OW:][:p.OH*p.OW]
		ix := X[plane*p.OH*p.OW:][:p.OH*p.OW]
		for oy := 0; oy < p.OH; oy++ {
			r0 := src[2*oy*p.W:][:2*p.OW]
			r1 := src[(2*oy+1)*p.W:][:2*p.OW]
			d := dst[oy*p.OW:][:p.OW]
			x := ix[oy*p.OW:][:p.OW]
			for ox := range d {
				best, at := r0[2*ox], float32(0)
				if v := r0[2*ox+1]; v > best {
					best, at = v, 1
				}
				if v := r1[2*ox]; v > best {
					best, at = v, 2
				}
				if v := r1[2*ox+1]; v > best {
					best, at = v, 3
				}
				d[ox], x[ox] = best, at
			}
		}
	}
}

// MaxPoolGrad implements Backend.
func (g *GoBackend) MaxPoolGrad(gr, idx, out Buf, p Pool) {
	G, X, O := g.bufs[gr], g.bufs[idx], g.bufs[out]
	clear(O[:p.N*p.C*p.H*p.W])
	for plane := 0; plane < p.N*p.C; plane++ {
		dst := O[plane*p.H*p.W:][:p.H*p.W]
		gg := G[plane*p.OH*p.OW:][:p.OH*p.OW]
		ix := X[plane*p.OH*p.OW:][:p.OH*p.OW]
		for oy := 0; oy < p.OH; oy++ {
			for ox := 0; ox < p.OW; ox++ {
				at := int(ix[oy*p.OW+ox])
				if at < 0 {
					continue
				}
				y, x := oy*p.SH+at/p.KW, ox*p.SW+at%p.KW
				dst[y*p.W+x] += gg[oy*p.OW+ox]
			}
		}
	}
}

// BatchNorm implements Backend.
func (g *GoBackend) BatchNorm(x, out, save, running Buf, p Norm, training bool) {
	BatchNormCPU(g.bufs[x], g.bufs[out], g.bufs[save], g.bufs[running], p, training)
}

// BatchNormGrad implements Backend.
func (g *GoBackend) BatchNormGrad(x, gr, out, save Buf, p Norm) {
	BatchNormGradCPU(g.bufs[x], g.bufs[gr], g.bufs[out], g.bufs[save], p)
}

// Im2col implements Backend.
func (g *GoBackend) Im2col(x, cols Buf, p Conv) { Im2colCPU(g.bufs[x], g.bufs[cols], p) }

// Col2im implements Backend.
func (g *GoBackend) Col2im(cols, x Buf, p Conv) { Col2imCPU(g.bufs[cols], g.bufs[x], p) }

// Swap01 implements Backend.
func (g *GoBackend) Swap01(in, out Buf, a, b, c int, bias Buf) {
	var B []float32
	if bias != NoBuf {
		B = g.bufs[bias]
	}
	Swap01CPU(g.bufs[in], g.bufs[out], a, b, c, B)
}

// Adam implements Backend with package optim's arithmetic.
func (g *GoBackend) Adam(p, gr, m, v Buf, n int, a optim.AdamStep) {
	optim.AdamUpdate(g.bufs[p][:n], g.bufs[gr][:n], g.bufs[m][:n], g.bufs[v][:n], a)
}

// SGD implements Backend with package optim's arithmetic.
func (g *GoBackend) SGD(p, gr, vel Buf, n int, lr, momentum, decay float32) {
	optim.SGDUpdate(g.bufs[p][:n], g.bufs[gr][:n], g.bufs[vel][:n], lr, momentum, decay)
}

// BatchNormCPU normalises X (N×C×HW) per channel into O. In training it
// uses the batch mean and biased variance, saves the mean and 1/σ in S
// (2·C) and updates the running mean and unbiased variance in R (2·C) as
// R = momentum·batch + (1−momentum)·R; otherwise it uses R. The sums over
// the N·HW values of a channel accumulate in float64: in float32 they
// drift by ~N·HW ulps (1e-3 relative at 16,384 values), which the
// gradient's cancellation then shows.
func BatchNormCPU(X, O, S, R []float32, p Norm, training bool) {
	n := float64(p.N * p.HW)
	for c := 0; c < p.C; c++ {
		var mean, inv float32
		if training {
			var s, ss float64
			for b := 0; b < p.N; b++ {
				for _, v := range X[(b*p.C+c)*p.HW:][:p.HW] {
					s += float64(v)
				}
			}
			mean = float32(s / n)
			for b := 0; b < p.N; b++ {
				for _, v := range X[(b*p.C+c)*p.HW:][:p.HW] {
					d := float64(v - mean)
					ss += d * d
				}
			}
			inv = 1 / math32.Sqrt(float32(ss/n)+p.Epsilon)
			S[c], S[p.C+c] = mean, inv
			R[c] = p.Momentum*mean + (1-p.Momentum)*R[c]
			R[p.C+c] = p.Momentum*float32(ss/(n-1)) + (1-p.Momentum)*R[p.C+c]
		} else {
			mean, inv = R[c], 1/math32.Sqrt(R[p.C+c]+p.Epsilon)
		}
		for b := 0; b < p.N; b++ {
			src, dst := X[(b*p.C+c)*p.HW:][:p.HW], O[(b*p.C+c)*p.HW:][:p.HW]
			for i, v := range src {
				dst[i] = (v - mean) * inv
			}
		}
	}
}

// BatchNormGradCPU is the gradient of BatchNormCPU in training: dx from
// x, dy (G) and the saved statistics (sums in float64, as in BatchNormCPU).
func BatchNormGradCPU(X, G, O, S []float32, p Norm) {
	n := float64(p.N * p.HW)
	for c := 0; c < p.C; c++ {
		mean, inv := S[c], S[p.C+c]
		var sum, dot float64
		for b := 0; b < p.N; b++ {
			off := (b*p.C + c) * p.HW
			for i, dy := range G[off : off+p.HW] {
				sum += float64(dy)
				dot += float64(X[off+i]-mean) * float64(dy)
			}
		}
		k := float32(dot/n) * inv * inv
		gm := float32(sum / n)
		for b := 0; b < p.N; b++ {
			off := (b*p.C + c) * p.HW
			for i, dy := range G[off : off+p.HW] {
				O[off+i] = (dy - (X[off+i]-mean)*k - gm) * inv
			}
		}
	}
}

// Im2colCPU writes the columns of the batch X as C (KDim × N·PDim): row
// (c, ky, kx), column (n, oy, ox).
func Im2colCPU(X, C []float32, p Conv) {
	P, NP := p.PDim(), p.N*p.PDim()
	for n := 0; n < p.N; n++ {
		for c := 0; c < p.C; c++ {
			plane := X[(n*p.C+c)*p.H*p.W:][:p.H*p.W]
			for ky := 0; ky < p.K; ky++ {
				for kx := 0; kx < p.K; kx++ {
					row := C[((c*p.K+ky)*p.K+kx)*NP+n*P:][:P]
					for oy := 0; oy < p.OH; oy++ {
						iy := oy + ky - p.Pad
						dst := row[oy*p.OW : (oy+1)*p.OW]
						if iy < 0 || iy >= p.H {
							clear(dst)
							continue
						}
						src := plane[iy*p.W : (iy+1)*p.W]
						lo, hi := max(p.Pad-kx, 0), min(p.W+p.Pad-kx, p.OW)
						clear(dst[:max(lo, 0)])
						if hi > lo {
							copy(dst[lo:hi], src[lo+kx-p.Pad:])
						}
						if hi < p.OW {
							clear(dst[max(hi, 0):])
						}
					}
				}
			}
		}
	}
}

// Col2imCPU adds the columns C back onto X (zeroed first): the adjoint of
// Im2colCPU.
func Col2imCPU(C, X []float32, p Conv) {
	P, NP := p.PDim(), p.N*p.PDim()
	clear(X[:p.N*p.C*p.H*p.W])
	for n := 0; n < p.N; n++ {
		for c := 0; c < p.C; c++ {
			plane := X[(n*p.C+c)*p.H*p.W:][:p.H*p.W]
			for ky := 0; ky < p.K; ky++ {
				for kx := 0; kx < p.K; kx++ {
					row := C[((c*p.K+ky)*p.K+kx)*NP+n*P:][:P]
					lo, hi := max(p.Pad-kx, 0), min(p.W+p.Pad-kx, p.OW)
					if hi <= lo {
						continue
					}
					for oy := 0; oy < p.OH; oy++ {
						iy := oy + ky - p.Pad
						if iy < 0 || iy >= p.H {
							continue
						}
						src := row[oy*p.OW+lo : oy*p.OW+hi]
						dst := plane[iy*p.W+lo+kx-p.Pad:][:len(src)]
						for i, v := range src {
							dst[i] += v
						}
					}
				}
			}
		}
	}
}

// Swap01CPU permutes I (a×b×c) to O (b×a×c), adding B[i] (when B is not
// nil) along the a axis.
func Swap01CPU(I, O []float32, a, b, c int, B []float32) {
	for i := 0; i < a; i++ {
		for j := 0; j < b; j++ {
			src := I[(i*b+j)*c:][:c]
			dst := O[(j*a+i)*c:][:c]
			if B == nil {
				copy(dst, src)
				continue
			}
			bv := B[i]
			for k, v := range src {
				dst[k] = v + bv
			}
		}
	}
}
