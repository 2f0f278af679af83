package exec

import (
	"fmt"
	"math"

	"github.com/chewxy/math32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"gpuwizard/trainer/exec/internal/par"
	"gpuwizard/trainer/exec/internal/sgemm"
	"gpuwizard/trainer/exec/internal/vmath"
)

// GoBackend runs the kernels on the CPU in Go, every kernel shared out
// over the batch (or its elements, rows or channels) to GOMAXPROCS
// goroutines through a pool, with no allocation per step: each kernel's
// arguments live in a job struct of the backend. It is the reference the
// CUDA backend's tests started from; the float64 backend of the tests is
// the reference for both.
type GoBackend struct {
	bufs    [][]float32
	gemm    sgemm.Gemm
	generic bool // use gonum's SGEMM even where the AVX2 kernel runs
	pool    par.Pool
	j       goJobs
	scratch int // ConvScratch (0: DefaultConvScratch)
}

var (
	_ Backend       = (*GoBackend)(nil)
	_ ConvScratcher = (*GoBackend)(nil)
	_ ColumnKeeper  = (*GoBackend)(nil)
)

// goJobs holds one job per kernel kind: the backend runs one kernel at a
// time, so one of each is enough.
type goJobs struct {
	fill        fillJob
	binary      binaryJob
	unary       unaryJob
	apply       applyJob
	gonum       gonumJob
	repeat      repeatJob
	sumRows     sumRowsJob
	sumCols     sumColsJob
	sumKeep     sumKeepJob
	softmax     softmaxJob
	softmaxGrad softmaxGradJob
	maxPool     maxPoolJob
	maxPoolGrad maxPoolGradJob
	bn          bnJob
	bnGrad      bnGradJob
	normSiLU    normSiLUJob
	normSiLUGd  normSiLUGradJob
	im2col      im2colJob
	col2im      col2imJob
	swap        swapJob
	adam        adamJob
	sgd         sgdJob
	det         detJob
}

// Grains: items per chunk handed to a goroutine. Element-wise work comes
// in 16 Ki-element chunks (64 KiB, a few µs each); rows, planes and
// images by count.
const (
	elemGrain = 16 << 10
	rowGrain  = 16
)

// NewGoBackend returns an empty CPU backend.
func NewGoBackend() *GoBackend { return &GoBackend{} }

// UseGonumGEMM makes the backend use gonum's SGEMM even on CPUs with AVX2
// and FMA (tests and benchmarks compare the two).
func (g *GoBackend) UseGonumGEMM() { g.generic = true }

// ConvScratch implements ConvScratcher: DefaultConvScratch, or what
// SetConvScratch chose.
func (g *GoBackend) ConvScratch() int {
	if g.scratch > 0 {
		return g.scratch
	}
	return DefaultConvScratch
}

// SetConvScratch sets the floats of columns a convolution unfolds at once
// in programs planned from now on (tests cut the batch into small parts).
func (g *GoBackend) SetConvScratch(n int) { g.scratch = n }

// StridedColumns implements ColumnKeeper: 64 MiB of columns. A batch of
// 16 at 128 pixels keeps all three of the nano detector's strided
// convolutions (21 MB); at 320 pixels the last (30 MB) and not the first
// two (44 and 59 MB). Keeping them measured 1.03-1.05x the step at 128
// pixels (two trainers alternated in one process, losses bit for bit
// the same).
func (g *GoBackend) StridedColumns() int { return 16 << 20 }

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

// View implements Backend.
func (g *GoBackend) View(parent Buf, off, n int) (Buf, error) {
	if parent < 0 || int(parent) >= len(g.bufs) || off < 0 || n < 0 || off+n > len(g.bufs[parent]) {
		return NoBuf, fmt.Errorf("%w: view [%d, %d) of buffer %d is out of range", ErrExec, off, off+n, parent)
	}
	g.bufs = append(g.bufs, g.bufs[parent][off:off+n:off+n])
	return Buf(len(g.bufs) - 1), nil
}

// Data exposes a buffer's memory (tests and the CPU trainer read it
// without a copy).
func (g *GoBackend) Data(b Buf) []float32 { return g.bufs[b] }

// Close implements Backend.
func (g *GoBackend) Close() error {
	g.bufs = nil
	g.j = goJobs{}
	g.pool.Close()
	return nil
}

// Upload implements Backend.
func (g *GoBackend) Upload(dst Buf, src []float32) { copy(g.bufs[dst], src) }

// Download implements Backend.
func (g *GoBackend) Download(dst []float32, src Buf) error {
	copy(dst, g.bufs[src])
	return nil
}

// Err implements Backend: the Go kernels cannot fail.
func (g *GoBackend) Err() error { return nil }

func (g *GoBackend) buf(b Buf) []float32 {
	if b == NoBuf {
		return nil
	}
	return g.bufs[b]
}

type fillJob struct {
	d []float32
	v float32
}

func (j *fillJob) Run(_, lo, hi int) {
	for i := range j.d[lo:hi] {
		j.d[lo+i] = j.v
	}
}

// Fill implements Backend.
func (g *GoBackend) Fill(dst Buf, n int, v float32) {
	g.j.fill = fillJob{d: g.bufs[dst][:n], v: v}
	g.pool.For(n, elemGrain, &g.j.fill)
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

type binaryJob struct {
	op     BinOp
	a, b   []float32
	o      []float32
	as, bs bool
}

func (j *binaryJob) Run(_, lo, hi int) {
	A, B, O := j.a, j.b, j.o[lo:hi]
	switch {
	case j.as && j.bs:
		O[0] = binop(j.op, A[0], B[0])
	case j.bs:
		s := B[0]
		A = A[lo:hi]
		switch j.op {
		case OpAdd:
			vmath.ScaleShift(O, A, 1, s)
		case OpMul: // a loop: x·s + 0 would turn −0 into +0
			for i, x := range A {
				O[i] = x * s
			}
		case OpDiv:
			for i, x := range A {
				O[i] = x / s
			}
		default:
			for i, x := range A {
				O[i] = binop(j.op, x, s)
			}
		}
	case j.as:
		s := A[0]
		for i, y := range B[lo:hi] {
			O[i] = binop(j.op, s, y)
		}
	default:
		A, B = A[lo:hi], B[lo:hi]
		switch j.op {
		case OpAdd:
			vmath.Binary(vmath.OpAdd, O, A, B)
		case OpSub:
			vmath.Binary(vmath.OpSub, O, A, B)
		case OpMul:
			vmath.Binary(vmath.OpMul, O, A, B)
		case OpSiLUGrad:
			SiLUGradTo(O, A, B)
		default:
			for i := range O {
				O[i] = binop(j.op, A[i], B[i])
			}
		}
	}
}

// Binary implements Backend.
func (g *GoBackend) Binary(op BinOp, a, b, out Buf, n int, aScalar, bScalar bool) {
	g.j.binary = binaryJob{op: op, a: g.bufs[a], b: g.bufs[b], o: g.bufs[out][:n], as: aScalar, bs: bScalar}
	if aScalar && bScalar {
		n = 1
	}
	g.pool.For(n, elemGrain, &g.j.binary)
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
	case OpSiLUGrad:
		return SiLUGrad(x, y)
	}
	return float32(math.NaN())
}

// SiLU is x·σ(x).
func SiLU(x float32) float32 { return x / (1 + vmath.Exp(-x)) }

// SiLUGrad is g times SiLU's derivative at x: g·σ(x)·(1 + x·(1 − σ(x))).
func SiLUGrad(x, g float32) float32 {
	s := 1 / (1 + vmath.Exp(-x))
	return g * s * (1 + x*(1-s))
}

// SiLUTo writes SiLU(x) into o for each x in a, with vector code where
// the CPU has it (package vmath): the Go backend's kernel, which the tape
// machine's SiLU calls too, so that both give the same bits.
func SiLUTo(o, a []float32) { vmath.SiLU(o, a) }

// SiLUGradTo writes SiLUGrad(x[i], g[i]) into o[i] (as SiLUTo).
func SiLUGradTo(o, x, g []float32) { vmath.SiLUGrad(o, x, g) }

type unaryJob struct {
	op   UnOp
	a, o []float32
}

func (j *unaryJob) Run(_, lo, hi int) {
	A, O := j.a[lo:hi], j.o[lo:hi]
	if j.op == OpSiLU {
		SiLUTo(O, A)
		return
	}
	for i, x := range A {
		switch j.op {
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
		case OpSiLU:
			O[i] = SiLU(x)
		}
	}
}

// Unary implements Backend.
func (g *GoBackend) Unary(op UnOp, a, out Buf, n int) {
	g.j.unary = unaryJob{op: op, a: g.bufs[a][:n], o: g.bufs[out][:n]}
	g.pool.For(n, elemGrain, &g.j.unary)
}

// epi is an Epilogue with its buffers resolved.
type epi struct {
	scale, bias, mask []float32
	inner, c          int
}

func (g *GoBackend) epi(e Epilogue) epi {
	return epi{scale: g.buf(e.Scale), bias: g.buf(e.Bias), mask: g.buf(e.Mask), inner: max(e.Inner, 1), c: max(e.C, 1)}
}

// run writes dst = e(src) where dst[0] is element base of the output.
func (e *epi) run(src, dst []float32, base int) {
	if e.scale == nil && e.bias == nil && e.mask == nil {
		copy(dst, src)
		return
	}
	var mask []float32
	if e.mask != nil {
		mask = e.mask[base : base+len(dst)]
	}
	if e.scale == nil && e.bias == nil { // a ReLU alone
		for t, v := range src {
			dst[t], mask[t] = relu(v)
		}
		return
	}
	if e.inner == 1 { // the channel is the column of rows of C (a dense layer)
		for k := 0; k < len(dst); {
			ch := (base + k) % e.c
			end := min(len(dst), k+e.c-ch)
			var sc, bi []float32
			if e.scale != nil {
				sc = e.scale[ch : ch+end-k]
			}
			if e.bias != nil {
				bi = e.bias[ch : ch+end-k]
			}
			var m []float32
			if mask != nil {
				m = mask[k:end]
			}
			epiRow(src[k:end], dst[k:end], sc, bi, m)
			k = end
		}
		return
	}
	for k := 0; k < len(dst); { // segments of one channel
		i := base + k
		ch := (i / e.inner) % e.c
		end := min(len(dst), k+e.inner-i%e.inner)
		s, b := float32(1), float32(0)
		if e.scale != nil {
			s = e.scale[ch]
		}
		if e.bias != nil {
			b = e.bias[ch]
		}
		seg, out := src[k:end], dst[k:end]
		if mask == nil {
			vmath.ScaleShift(out, seg, s, b)
		} else {
			m := mask[k:end]
			for t, v := range seg {
				out[t], m[t] = relu(v*s + b)
			}
		}
		k = end
	}
}

// relu is gorgonia's Rectify, x ⊙ (x ≥ 0), with its mask: a negative x
// gives −0 and NaN stays NaN, as the two ops do. Written so that the
// compiler emits a SETcc, not a branch: activations' signs are random, and
// mispredictions cost more than the arithmetic.
func relu(v float32) (float32, float32) {
	var k int32
	if v >= 0 {
		k = 1
	}
	m := float32(k)
	return v * m, m
}

// epiRow applies per-element scales sc and biases bi (nil: none) and, with
// m, the ReLU.
func epiRow(src, dst, sc, bi, m []float32) {
	for t, v := range src {
		if sc != nil {
			v *= sc[t]
		}
		if bi != nil {
			v += bi[t]
		}
		if m != nil {
			v, m[t] = relu(v)
		}
		dst[t] = v
	}
}

type applyJob struct {
	in, out []float32
	e       epi
}

func (j *applyJob) Run(_, lo, hi int) { j.e.run(j.in[lo:hi], j.out[lo:hi], lo) }

// Apply implements Backend.
func (g *GoBackend) Apply(in, out Buf, n int, e Epilogue) {
	g.j.apply = applyJob{in: g.bufs[in][:n], out: g.bufs[out][:n], e: g.epi(e)}
	g.pool.For(n, elemGrain, &g.j.apply)
}

// gonumJob runs gonum's SGEMM on tiles of C small enough for its serial
// path (its own parallel path starts one goroutine per 64×64 block).
type gonumJob struct {
	ta, tb         blas.Transpose
	m, n, k        int
	lda, ldb       int
	a, b, c        []float32
	beta           float32
	rows, cols     int
	transA, transB bool
}

const gonumTM, gonumTN = 64, 128 // 2 of gonum's blocks: below its parallel threshold

func (j *gonumJob) Run(_, lo, hi int) {
	impl := blas32.Implementation()
	for t := lo; t < hi; t++ {
		i, jj := t/j.cols*gonumTM, t%j.cols*gonumTN
		mi, nj := min(gonumTM, j.m-i), min(gonumTN, j.n-jj)
		ao := i * j.lda
		if j.transA {
			ao = i
		}
		bo := jj
		if j.transB {
			bo = jj * j.ldb
		}
		impl.Sgemm(j.ta, j.tb, mi, nj, j.k, 1, j.a[ao:], j.lda, j.b[bo:], j.ldb, j.beta, j.c[i*j.n+jj:], j.n)
	}
}

// Gemm implements Backend: with the AVX2/FMA kernel (package sgemm) where
// the CPU has it, else with gonum's SGEMM on tiles; both share the work
// out through the backend's pool.
func (g *GoBackend) Gemm(transA, transB bool, m, n, k int, a, b, c Buf, beta float32) {
	A, B, C := g.bufs[a], g.bufs[b], g.bufs[c]
	if !g.generic && sgemm.Available() {
		g.gemm.Run(&g.pool, transA, transB, m, n, k, A, B, C, beta)
		return
	}
	j := &g.j.gonum
	*j = gonumJob{ta: blas.NoTrans, tb: blas.NoTrans, m: m, n: n, k: k, lda: k, ldb: n, a: A, b: B, c: C, beta: beta,
		rows: (m + gonumTM - 1) / gonumTM, cols: (n + gonumTN - 1) / gonumTN, transA: transA, transB: transB}
	if transA {
		j.ta, j.lda = blas.Trans, m
	}
	if transB {
		j.tb, j.ldb = blas.Trans, k
	}
	g.pool.For(j.rows*j.cols, 1, j)
}

type repeatJob struct {
	in, out    []float32
	rep, inner int
}

func (j *repeatJob) Run(_, lo, hi int) {
	for r := lo; r < hi; r++ { // row r of out: (o, rep)
		o := r / j.rep
		copy(j.out[r*j.inner:(r+1)*j.inner], j.in[o*j.inner:(o+1)*j.inner])
	}
}

// Repeat implements Backend.
func (g *GoBackend) Repeat(in, out Buf, outer, rep, inner int) {
	g.j.repeat = repeatJob{in: g.bufs[in], out: g.bufs[out], rep: rep, inner: inner}
	g.pool.For(outer*rep, max(elemGrain/max(inner, 1), 1), &g.j.repeat)
}

// sumRowsJob: out[o] = Σ in[o, :] (inner 1), one row per item.
type sumRowsJob struct {
	in, out []float32
	red     int
}

func (j *sumRowsJob) Run(_, lo, hi int) {
	for o := lo; o < hi; o++ {
		j.out[o] = float32(vmath.Sum64(j.in[o*j.red : (o+1)*j.red]))
	}
}

// sumColsJob: out[o, k] = Σ_r in[o, r, k], items are columns k (all o).
type sumColsJob struct {
	in, out           []float32
	outer, red, inner int
}

func (j *sumColsJob) Run(_, lo, hi int) {
	for o := 0; o < j.outer; o++ {
		dst := j.out[o*j.inner+lo : o*j.inner+hi]
		copy(dst, j.in[o*j.red*j.inner+lo:])
		for r := 1; r < j.red; r++ {
			src := j.in[(o*j.red+r)*j.inner+lo:][:len(dst)]
			for i, v := range src {
				dst[i] += v
			}
		}
	}
}

// Sum implements Backend.
func (g *GoBackend) Sum(in, out Buf, outer, red, inner int) {
	I, O := g.bufs[in], g.bufs[out]
	if inner == 1 {
		g.j.sumRows = sumRowsJob{in: I, out: O, red: red}
		g.pool.For(outer, max(elemGrain/max(red, 1), 1), &g.j.sumRows)
		return
	}
	g.j.sumCols = sumColsJob{in: I, out: O, outer: outer, red: red, inner: inner}
	g.pool.For(inner, max(elemGrain/max(outer*red, 1), 64), &g.j.sumCols)
}

type sumKeepJob struct {
	in, out            []float32
	outer, keep, inner int
}

func (j *sumKeepJob) Run(_, lo, hi int) {
	for c := lo; c < hi; c++ {
		var s float64
		for o := 0; o < j.outer; o++ {
			s += vmath.Sum64(j.in[(o*j.keep+c)*j.inner:][:j.inner])
		}
		j.out[c] = float32(s)
	}
}

// SumKeep implements Backend.
func (g *GoBackend) SumKeep(in, out Buf, outer, keep, inner int) {
	g.j.sumKeep = sumKeepJob{in: g.bufs[in], out: g.bufs[out], outer: outer, keep: keep, inner: inner}
	g.pool.For(keep, 1, &g.j.sumKeep)
}

type softmaxJob struct {
	in, out []float32
	cols    int
	log     bool
}

func (j *softmaxJob) Run(_, lo, hi int) {
	cols := j.cols
	for r := lo; r < hi; r++ {
		x, y := j.in[r*cols:(r+1)*cols], j.out[r*cols:(r+1)*cols]
		mx := x[0]
		for _, v := range x[1:] {
			mx = max(mx, v)
		}
		var sum float32
		for i, v := range x {
			e := math32.Exp(v - mx)
			sum += e
			if j.log {
				y[i] = v - mx
			} else {
				y[i] = e
			}
		}
		if j.log {
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

// Softmax implements Backend.
func (g *GoBackend) Softmax(in, out Buf, rows, cols int, log bool) {
	g.j.softmax = softmaxJob{in: g.bufs[in], out: g.bufs[out], cols: cols, log: log}
	g.pool.For(rows, rowGrain, &g.j.softmax)
}

type softmaxGradJob struct {
	y, g, out []float32
	cols      int
	log       bool
}

func (j *softmaxGradJob) Run(_, lo, hi int) {
	cols := j.cols
	for r := lo; r < hi; r++ {
		yy, gg, dx := j.y[r*cols:(r+1)*cols], j.g[r*cols:(r+1)*cols], j.out[r*cols:(r+1)*cols]
		var s float32
		if j.log {
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

// SoftmaxGrad implements Backend.
func (g *GoBackend) SoftmaxGrad(y, gr, out Buf, rows, cols int, log bool) {
	g.j.softmaxGrad = softmaxGradJob{y: g.bufs[y], g: g.bufs[gr], out: g.bufs[out], cols: cols, log: log}
	g.pool.For(rows, rowGrain, &g.j.softmaxGrad)
}

func pool2x2(p Pool) bool {
	return p.KH == 2 && p.KW == 2 && p.SH == 2 && p.SW == 2 && p.OH*2 <= p.H && p.OW*2 <= p.W
}

type maxPoolJob struct {
	in, out, idx []float32
	p            Pool
}

// Run pools planes lo..hi-1. Ties go to the first element of the window
// in row-major order, as in gorgonia.
func (j *maxPoolJob) Run(_, lo, hi int) {
	p := j.p
	for plane := lo; plane < hi; plane++ {
		src := j.in[plane*p.H*p.W:][:p.H*p.W]
		dst := j.out[plane*p.OH*p.OW:][:p.OH*p.OW]
		ix := j.idx[plane*p.OH*p.OW:][:p.OH*p.OW]
		if pool2x2(p) {
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
			continue
		}
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

// MaxPool implements Backend.
func (g *GoBackend) MaxPool(in, out, idx Buf, p Pool) {
	g.j.maxPool = maxPoolJob{in: g.bufs[in], out: g.bufs[out], idx: g.bufs[idx], p: p}
	g.pool.For(p.N*p.C, rowGrain, &g.j.maxPool)
}

type maxPoolGradJob struct {
	g, idx, mask, out []float32
	p                 Pool
}

func (j *maxPoolGradJob) Run(_, lo, hi int) {
	p := j.p
	hw, ohw := p.H*p.W, p.OH*p.OW
	for plane := lo; plane < hi; plane++ {
		dst := j.out[plane*hw:][:hw]
		gg := j.g[plane*ohw:][:ohw]
		ix := j.idx[plane*ohw:][:ohw]
		if pool2x2(p) && p.OH*2 == p.H && p.OW*2 == p.W { // windows tile the plane: write each once
			for oy := 0; oy < p.OH; oy++ {
				r0, r1 := dst[2*oy*p.W:][:2*p.OW], dst[(2*oy+1)*p.W:][:2*p.OW]
				for ox := 0; ox < p.OW; ox++ {
					v, at := gg[oy*p.OW+ox], ix[oy*p.OW+ox]
					r0[2*ox], r0[2*ox+1], r1[2*ox], r1[2*ox+1] = 0, 0, 0, 0
					switch at {
					case 0:
						r0[2*ox] = v
					case 1:
						r0[2*ox+1] = v
					case 2:
						r1[2*ox] = v
					case 3:
						r1[2*ox+1] = v
					}
				}
			}
		} else {
			clear(dst)
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
		if j.mask != nil {
			for i, m := range j.mask[plane*hw:][:hw] {
				dst[i] *= m
			}
		}
	}
}

// MaxPoolGrad implements Backend.
func (g *GoBackend) MaxPoolGrad(gr, idx, mask, out Buf, p Pool) {
	g.j.maxPoolGrad = maxPoolGradJob{g: g.bufs[gr], idx: g.bufs[idx], mask: g.buf(mask), out: g.bufs[out], p: p}
	g.pool.For(p.N*p.C, rowGrain, &g.j.maxPoolGrad)
}

type bnJob struct {
	x, o, s, r []float32
	p          Norm
	training   bool
}

func (j *bnJob) Run(_, lo, hi int) { batchNorm(j.x, j.o, j.s, j.r, j.p, j.training, lo, hi) }

// BatchNorm implements Backend (channels in parallel).
func (g *GoBackend) BatchNorm(x, out, save, running Buf, p Norm, training bool) {
	g.j.bn = bnJob{x: g.bufs[x], o: g.bufs[out], s: g.bufs[save], r: g.bufs[running], p: p, training: training}
	g.pool.For(p.C, 1, &g.j.bn)
}

type bnGradJob struct {
	x, g, o, s []float32
	p          Norm
}

func (j *bnGradJob) Run(_, lo, hi int) { batchNormGrad(j.x, j.g, j.o, j.s, j.p, lo, hi) }

// BatchNormGrad implements Backend (channels in parallel).
func (g *GoBackend) BatchNormGrad(x, gr, out, save Buf, p Norm) {
	g.j.bnGrad = bnGradJob{x: g.bufs[x], g: g.bufs[gr], o: g.bufs[out], s: g.bufs[save], p: p}
	g.pool.For(p.C, 1, &g.j.bnGrad)
}

type im2colJob struct {
	x, cols []float32
	p       Conv
}

func (j *im2colJob) Run(_, lo, hi int) { im2colRows(j.x, j.cols, j.p, lo, hi) }

// Im2col implements Backend (rows of the columns in parallel: each
// goroutine writes whole rows, all images).
func (g *GoBackend) Im2col(x, cols Buf, p Conv) {
	g.j.im2col = im2colJob{x: g.bufs[x], cols: g.bufs[cols], p: p}
	g.pool.For(p.KDim(), 1, &g.j.im2col)
}

// im2colRows writes rows lo..hi-1 (c, ky, kx) of the columns.
func im2colRows(X, C []float32, p Conv, lo, hi int) {
	if p.S() > 1 {
		im2colStrided(X, C, p, lo, hi)
		return
	}
	if p.same() {
		im2colSame(X, C, p, lo, hi)
		return
	}
	P, NP := p.PDim(), p.N*p.PDim()
	for r := lo; r < hi; r++ {
		c, ky, kx := r/(p.K*p.K), r/p.K%p.K, r%p.K
		row := C[r*NP : (r+1)*NP]
		l, h := max(p.Pad-kx, 0), min(p.W+p.Pad-kx, p.OW)
		for n := 0; n < p.N; n++ {
			plane := X[(n*p.C+c)*p.H*p.W:][:p.H*p.W]
			img := row[n*P : (n+1)*P]
			for oy := 0; oy < p.OH; oy++ {
				iy := oy + ky - p.Pad
				dst := img[oy*p.OW : (oy+1)*p.OW]
				if iy < 0 || iy >= p.H || h <= l {
					clear(dst)
					continue
				}
				src := plane[iy*p.W+l+kx-p.Pad:][:h-l]
				for t := 0; t < l; t++ {
					dst[t] = 0
				}
				copy(dst[l:h], src)
				for t := h; t < p.OW; t++ {
					dst[t] = 0
				}
			}
		}
	}
}

type col2imJob struct {
	cols, x []float32
	p       Conv
}

func (j *col2imJob) Run(_, lo, hi int) { col2im(j.cols, j.x, j.p, lo, hi) }

// Col2im implements Backend (image planes in parallel: a part of the
// batch may be one image).
func (g *GoBackend) Col2im(cols, x Buf, p Conv) {
	g.j.col2im = col2imJob{cols: g.bufs[cols], x: g.bufs[x], p: p}
	g.pool.For(p.N*p.C, 1, &g.j.col2im)
}

type swapJob struct {
	in, out []float32
	a, b, c int
	e       epi
}

// Run permutes rows lo..hi-1 of out (row r = j·a + i, from row i·b + j of in).
func (j *swapJob) Run(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		jj, i := r/j.a, r%j.a
		j.e.run(j.in[(i*j.b+jj)*j.c:][:j.c], j.out[r*j.c:][:j.c], r*j.c)
	}
}

// Swap01 implements Backend.
func (g *GoBackend) Swap01(in, out Buf, a, b, c int, e Epilogue) {
	g.j.swap = swapJob{in: g.bufs[in], out: g.bufs[out], a: a, b: b, c: c, e: g.epi(e)}
	g.pool.For(a*b, max(elemGrain/max(c, 1), 1), &g.j.swap)
}

type adamJob struct {
	p, g, m, v []float32
	s          [AdamScalars]float32
}

func (j *adamJob) Run(_, lo, hi int) {
	s := j.s
	adamUpdate(j.p[lo:hi], j.g[lo:hi], j.m[lo:hi], j.v[lo:hi], s[0], s[1], s[2], s[3], s[4])
}

// adamUpdate is optim.AdamUpdate's arithmetic (optim.AdamStep's scalars).
func adamUpdate(p, g, m, v []float32, b1, b2, step, eps, decay float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for k := range p {
		gk := g[k]
		mk := b1*m[k] + (1-b1)*gk
		vk := b2*v[k] + (1-b2)*gk*gk
		m[k], v[k] = mk, vk
		p[k] = p[k]*decay - step*mk/(float32(math.Sqrt(float64(vk)))+eps)
	}
}

// Adam implements Backend.
func (g *GoBackend) Adam(p, gr, m, v Buf, n int, s Buf) {
	j := &g.j.adam
	*j = adamJob{p: g.bufs[p][:n], g: g.bufs[gr][:n], m: g.bufs[m][:n], v: g.bufs[v][:n]}
	copy(j.s[:], g.bufs[s])
	g.pool.For(n, elemGrain, j)
}

type sgdJob struct {
	p, g, vel []float32
	s         [SGDScalars]float32
}

func (j *sgdJob) Run(_, lo, hi int) {
	lr, momentum, decay := j.s[0], j.s[1], j.s[2]
	p, g, vel := j.p[lo:hi], j.g[lo:hi], j.vel[lo:hi]
	for k := range p {
		gk := g[k] + decay*p[k]
		vel[k] = momentum*vel[k] + gk
		p[k] -= lr * vel[k]
	}
}

// SGD implements Backend.
func (g *GoBackend) SGD(p, gr, vel Buf, n int, s Buf) {
	j := &g.j.sgd
	*j = sgdJob{p: g.bufs[p][:n], g: g.bufs[gr][:n], vel: g.bufs[vel][:n]}
	copy(j.s[:], g.bufs[s])
	g.pool.For(n, elemGrain, j)
}

// BatchNormCPU normalises X (N×C×HW) per channel into O. In training it
// uses the batch mean and biased variance, saves the mean and 1/σ in S
// (2·C) and updates the running mean and unbiased variance in R (2·C) as
// R = momentum·batch + (1−momentum)·R; otherwise it uses R. The sums over
// the N·HW values of a channel accumulate in float64: in float32 they
// drift by ~N·HW ulps (1e-3 relative at 16,384 values), which the
// gradient's cancellation then shows.
func BatchNormCPU(X, O, S, R []float32, p Norm, training bool) {
	batchNorm(X, O, S, R, p, training, 0, p.C)
}

func batchNorm(X, O, S, R []float32, p Norm, training bool, lo, hi int) {
	for c := lo; c < hi; c++ {
		var mean, inv float32
		if training {
			mean, inv = normStats(X, S, R, p, c)
		} else {
			mean, inv = R[c], 1/math32.Sqrt(R[p.C+c]+p.Epsilon)
		}
		for b := 0; b < p.N; b++ {
			off := (b*p.C + c) * p.HW
			vmath.Normalize(O[off:off+p.HW], X[off:off+p.HW], mean, inv)
		}
	}
}

// BatchNormGradCPU is the gradient of BatchNormCPU in training: dx from
// x, dy (G) and the saved statistics (sums in float64, as in BatchNormCPU).
func BatchNormGradCPU(X, G, O, S []float32, p Norm) {
	batchNormGrad(X, G, O, S, p, 0, p.C)
}

func batchNormGrad(X, G, O, S []float32, p Norm, lo, hi int) {
	n := float64(p.N * p.HW)
	for c := lo; c < hi; c++ {
		mean, inv := S[c], S[p.C+c]
		var sum, dot float64
		for b := 0; b < p.N; b++ {
			off := (b*p.C + c) * p.HW
			s, d := vmath.SumDot64(G[off:off+p.HW], X[off:off+p.HW], mean)
			sum, dot = sum+s, dot+d
		}
		k := float32(dot/n) * inv * inv
		gm := float32(sum / n)
		for b := 0; b < p.N; b++ {
			off := (b*p.C + c) * p.HW
			vmath.NormGrad(O[off:off+p.HW], G[off:off+p.HW], X[off:off+p.HW], mean, k, gm, inv)
		}
	}
}

// Im2colCPU writes the columns of the batch X as C (KDim × N·PDim): row
// (c, ky, kx), column (n, oy, ox).
func Im2colCPU(X, C []float32, p Conv) { im2col(X, C, p, 0, p.N) }

// im2col writes the columns of images lo..hi-1.
func im2col(X, C []float32, p Conv, lo, hi int) {
	if p.S() > 1 {
		im2colStrided(X, C, p, 0, p.KDim())
		return
	}
	P, NP := p.PDim(), p.N*p.PDim()
	for n := lo; n < hi; n++ {
		for c := 0; c < p.C; c++ {
			plane := X[(n*p.C+c)*p.H*p.W:][:p.H*p.W]
			for ky := 0; ky < p.K; ky++ {
				for kx := 0; kx < p.K; kx++ {
					row := C[((c*p.K+ky)*p.K+kx)*NP+n*P:][:P]
					lo, hi := max(p.Pad-kx, 0), min(p.W+p.Pad-kx, p.OW)
					for oy := 0; oy < p.OH; oy++ {
						iy := oy + ky - p.Pad
						dst := row[oy*p.OW : (oy+1)*p.OW]
						if iy < 0 || iy >= p.H || hi <= lo {
							clear(dst)
							continue
						}
						src := plane[iy*p.W : (iy+1)*p.W]
						clear(dst[:lo])
						copy(dst[lo:hi], src[lo+kx-p.Pad:])
						clear(dst[hi:])
					}
				}
			}
		}
	}
}

// Col2imCPU writes X from the columns C, adding where windows overlap:
// the adjoint of Im2colCPU. C is scratch: a same convolution's entries
// that fall on the padding may be set to zero (col2imSame).
func Col2imCPU(C, X []float32, p Conv) { col2im(C, X, p, 0, p.N*p.C) }

// col2im writes the image planes lo..hi-1 (image n, channel c: n·C + c).
func col2im(C, X []float32, p Conv, lo, hi int) {
	P, NP := p.PDim(), p.N*p.PDim()
	clear(X[lo*p.H*p.W : hi*p.H*p.W])
	if p.S() > 1 {
		col2imStrided(C, X, p, lo, hi)
		return
	}
	if p.same() {
		col2imSame(C, X, p, lo, hi)
		return
	}
	for nc := lo; nc < hi; nc++ {
		n, c := nc/p.C, nc%p.C
		plane := X[nc*p.H*p.W:][:p.H*p.W]
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
					vmath.Binary(vmath.OpAdd, dst, dst, src)
				}
			}
		}
	}
}

// Swap01CPU permutes I (a×b×c) to O (b×a×c), adding B[i] (when B is not
// nil) along the a axis.
func Swap01CPU(I, O []float32, a, b, c int, B []float32) {
	e := epi{bias: B, inner: c, c: a}
	j := swapJob{in: I, out: O, a: a, b: b, c: c, e: e}
	j.Run(0, 0, a*b)
}

// strideRange is the run of output positions o (0 ≤ o < out) whose input
// position o·s + k − pad falls inside 0..in-1: [lo, hi).
func strideRange(k, pad, s, in, out int) (lo, hi int) {
	lo = max((pad-k+s-1)/s, 0)
	if pad-k < 0 {
		lo = 0
	}
	hi = min((in-1+pad-k)/s+1, out)
	if in-1+pad-k < 0 {
		hi = 0
	}
	return lo, max(hi, lo)
}

// im2colStrided writes rows lo..hi-1 (c, ky, kx) of a strided
// convolution's columns, every image.
func im2colStrided(X, C []float32, p Conv, lo, hi int) {
	P, NP, s := p.PDim(), p.N*p.PDim(), p.S()
	for r := lo; r < hi; r++ {
		c, ky, kx := r/(p.K*p.K), r/p.K%p.K, r%p.K
		row := C[r*NP : (r+1)*NP]
		xl, xh := strideRange(kx, p.Pad, s, p.W, p.OW)
		for n := 0; n < p.N; n++ {
			plane := X[(n*p.C+c)*p.H*p.W:][:p.H*p.W]
			img := row[n*P : (n+1)*P]
			for oy := 0; oy < p.OH; oy++ {
				iy := oy*s + ky - p.Pad
				dst := img[oy*p.OW : (oy+1)*p.OW]
				if iy < 0 || iy >= p.H || xh <= xl {
					clear(dst)
					continue
				}
				src := plane[iy*p.W : (iy+1)*p.W]
				clear(dst[:xl])
				if s == 2 {
					vmath.Gather2(dst[xl:xh], src[2*xl+kx-p.Pad:])
				} else {
					for ox := xl; ox < xh; ox++ {
						dst[ox] = src[ox*s+kx-p.Pad]
					}
				}
				clear(dst[xh:])
			}
		}
	}
}

// col2imStrided adds a strided convolution's columns into the image
// planes lo..hi-1 (cleared by the caller).
func col2imStrided(C, X []float32, p Conv, lo, hi int) {
	P, NP, s := p.PDim(), p.N*p.PDim(), p.S()
	for nc := lo; nc < hi; nc++ {
		n, c := nc/p.C, nc%p.C
		plane := X[nc*p.H*p.W:][:p.H*p.W]
		for ky := 0; ky < p.K; ky++ {
			yl, yh := strideRange(ky, p.Pad, s, p.H, p.OH)
			for kx := 0; kx < p.K; kx++ {
				xl, xh := strideRange(kx, p.Pad, s, p.W, p.OW)
				row := C[((c*p.K+ky)*p.K+kx)*NP+n*P:][:P]
				for oy := yl; oy < yh; oy++ {
					dst := plane[(oy*s+ky-p.Pad)*p.W:][:p.W]
					src := row[oy*p.OW : (oy+1)*p.OW]
					if s == 2 && xl < xh {
						vmath.ScatterAdd2(dst[2*xl+kx-p.Pad:], src[xl:xh])
						continue
					}
					for ox := xl; ox < xh; ox++ {
						dst[ox*s+kx-p.Pad] += src[ox]
					}
				}
			}
		}
	}
}
