package model

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"gpuwizard/trainer/exec"
)

// convOp is a fused 2-D convolution, with or without bias, for NCHW float32 tensors,
// stride 1 or more: out = W ⊛ x + b. gorgonia's own Conv2d decomposes into
// im2col, a GEMM in NHWC order, a transpose back to NCHW and a broadcast
// add, each allocating; this op reuses its buffers. Its gradients are
// separate ops that reuse the columns the forward pass built.
type convOp struct {
	n, c, h, w int // input
	o, k, pad  int // filters, kernel size (square), padding
	stride     int
	oh, ow     int
	cols       []float32 // (c·k·k) × (n·oh·ow), valid after Do
	tmp        []float32 // o × (n·oh·ow)
	dataInput  bool      // x is the network input: its gradient is never read
	bias       bool      // a third input b (1×O×1×1) is added
}

func newConvOp(n, c, h, w, o, k, pad, stride int) *convOp {
	stride = max(stride, 1)
	return &convOp{n: n, c: c, h: h, w: w, o: o, k: k, pad: pad, stride: stride,
		oh: (h+2*pad-k)/stride + 1, ow: (w+2*pad-k)/stride + 1}
}

// ConvStride implements exec.ConvStrider.
func (op *convOp) ConvStride() int { return op.stride }

// ConvGeometry implements exec.ConvOp.
func (op *convOp) ConvGeometry() (n, c, h, w, o, k, pad int) {
	return op.n, op.c, op.h, op.w, op.o, op.k, op.pad
}

// ConvForward and ConvGradWhich implement exec.ConvGradOp.
func (g *convGradOp) ConvForward() exec.ConvOp { return g.fwd }
func (g *convGradOp) ConvGradWhich() int       { return g.which }

func t4() hm.Type { return G.TensorType{Dims: 4, Of: tensor.Float32} }

func (op *convOp) Arity() int {
	if op.bias {
		return 3
	}
	return 2
}
func (op *convOp) Type() hm.Type {
	if op.bias {
		return hm.NewFnType(t4(), t4(), t4(), t4())
	}
	return hm.NewFnType(t4(), t4(), t4())
}
func (op *convOp) ReturnsPtr() bool  { return false }
func (op *convOp) CallsExtern() bool { return false }
func (op *convOp) OverwritesInput() int {
	return -1
}
func (op *convOp) String() string {
	if op.stride > 1 {
		return fmt.Sprintf("Conv%dx%d/%d(pad %d, %d→%d)", op.k, op.k, op.stride, op.pad, op.c, op.o)
	}
	return fmt.Sprintf("Conv%dx%d(pad %d, %d→%d)", op.k, op.k, op.pad, op.c, op.o)
}
func (op *convOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", op) }
func (op *convOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *convOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.n, op.o, op.oh, op.ow}, nil
}

// DiffWRT: the gradient flows to the image, the filters and the bias.
func (op *convOp) DiffWRT(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// SymDiff builds the gradient nodes from the output's gradient.
func (op *convOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dx, err := G.ApplyOp(&convGradOp{fwd: op, which: 0}, x, w, grad)
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&convGradOp{fwd: op, which: 1}, x, w, grad)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return G.Nodes{dx, dw}, nil
	}
	db, err := G.ApplyOp(&convGradOp{fwd: op, which: 2}, x, w, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

func f32(v G.Value) []float32 { return v.Data().([]float32) }

func (op *convOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.n, op.o, op.oh, op.ow), tensor.Of(tensor.Float32))
	return op.UsePreallocDo(out, vals...)
}

// UsePreallocDo implements gorgonia's UsePreallocDoer: the machine passes
// the output buffer of the previous step. The arithmetic is the executor's
// CPU kernels': columns of the whole batch, one GEMM, the permutation to
// NCHW with the bias.
func (op *convOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("conv: %d inputs, want %d", len(vals), op.Arity())
	}
	x, w, out := f32(vals[0]), f32(vals[1]), f32(prealloc)
	var b []float32
	if op.bias {
		b = f32(vals[2])
	}
	g := op.geometry()
	K, NP := g.KDim(), g.N*g.PDim()
	if len(op.cols) != K*NP {
		op.cols = make([]float32, K*NP)
		op.tmp = make([]float32, op.o*NP)
	}
	exec.Im2colCPU(x, op.cols, g)
	gemm(blas.NoTrans, blas.NoTrans, op.o, NP, K, w, K, op.cols, NP, 0, op.tmp, NP) // O × N·P
	exec.Swap01CPU(op.tmp, out, op.o, op.n, g.PDim(), b)
	return prealloc, nil
}

func (op *convOp) geometry() exec.Conv {
	return exec.Conv{N: op.n, C: op.c, H: op.h, W: op.w, O: op.o, K: op.k, Pad: op.pad, OH: op.oh, OW: op.ow, Stride: op.stride}
}

func gemm(ta, tb blas.Transpose, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ra, ca := m, k
	if ta == blas.Trans {
		ra, ca = k, m
	}
	rb, cb := k, n
	if tb == blas.Trans {
		rb, cb = n, k
	}
	blas32.Gemm(ta, tb, 1,
		blas32.General{Rows: ra, Cols: ca, Stride: lda, Data: a},
		blas32.General{Rows: rb, Cols: cb, Stride: ldb, Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// convGradOp computes one gradient of a convOp: which 0 is the image's,
// 1 the filters', 2 the bias's. Inputs: x, w, dy.
type convGradOp struct {
	fwd   *convOp
	which int
	dyT   []float32 // the output gradient as O × N·P
	dcol  []float32
}

func (g *convGradOp) Arity() int { return 3 }
func (g *convGradOp) Type() hm.Type {
	return hm.NewFnType(t4(), t4(), t4(), t4())
}
func (g *convGradOp) ReturnsPtr() bool      { return false }
func (g *convGradOp) CallsExtern() bool     { return false }
func (g *convGradOp) OverwritesInput() int  { return -1 }
func (g *convGradOp) String() string        { return fmt.Sprintf("∂%s/∂in%d", g.fwd, g.which) }
func (g *convGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", g) }
func (g *convGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	g.WriteHash(h)
	return h.Sum32()
}
func (g *convGradOp) shape() tensor.Shape {
	f := g.fwd
	switch g.which {
	case 0:
		return tensor.Shape{f.n, f.c, f.h, f.w}
	case 1:
		return tensor.Shape{f.o, f.c, f.k, f.k}
	}
	return tensor.Shape{1, f.o, 1, 1}
}
func (g *convGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return g.shape(), nil }

func (g *convGradOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(g.shape()...), tensor.Of(tensor.Float32))
	return g.UsePreallocDo(out, vals...)
}

func (g *convGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 3 {
		return nil, fmt.Errorf("conv gradient: %d inputs, want 3", len(vals))
	}
	f := g.fwd
	geo := f.geometry()
	w, dy, out := f32(vals[1]), f32(vals[2]), f32(prealloc)
	K, NP := geo.KDim(), geo.N*geo.PDim()
	if len(f.cols) != K*NP {
		return nil, fmt.Errorf("conv gradient: the forward pass has not run")
	}
	if len(g.dyT) != f.o*NP {
		g.dyT = make([]float32, f.o*NP)
	}
	exec.Swap01CPU(dy, g.dyT, f.n, f.o, geo.PDim(), nil) // dY' = O × N·P
	switch g.which {
	case 0: // dx = col2im(Wᵀ · dY')
		if f.dataInput {
			clear(out)
			break // nobody reads the gradient of the data
		}
		if len(g.dcol) != K*NP {
			g.dcol = make([]float32, K*NP)
		}
		gemm(blas.Trans, blas.NoTrans, K, NP, f.o, w, K, g.dyT, NP, 0, g.dcol, NP)
		exec.Col2imCPU(g.dcol, out, geo)
	case 1: // dW = dY' · colsᵀ
		gemm(blas.NoTrans, blas.Trans, f.o, K, NP, g.dyT, NP, f.cols, NP, 0, out, K)
	case 2: // db = Σ dY' over images and positions
		for oc := range out[:f.o] {
			var s float32
			for _, v := range g.dyT[oc*NP : (oc+1)*NP] {
				s += v
			}
			out[oc] = s
		}
	}
	return prealloc, nil
}
