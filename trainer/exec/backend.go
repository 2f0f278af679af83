// Package exec runs gorgonia's differentiated training graphs with its own
// executor: the steps are planned once from the sorted graph (ops are
// recognised by type and parameters), buffers are planned by liveness, and
// parameters, gradients and optimiser state stay resident on the backend.
// Each step moves only the batch in and the loss and logits out.
//
// Two backends implement the kernels: a Go backend (the CPU reference, with
// preallocated buffers and no allocation per step) and a CUDA backend that
// loads libcuda at run time (see cuda.go).
package exec

import (
	"errors"

	"gpuwizard/trainer/optim"
)

// ErrExec is returned (wrapped) when a graph cannot be planned or run.
var ErrExec = errors.New("executor")

// Buf names one buffer of a backend.
type Buf int32

// BinOp is an element-wise binary operator.
type BinOp uint8

// Binary operators. The comparisons return 1 or 0 in the same type.
const (
	OpAdd BinOp = iota
	OpSub
	OpMul
	OpDiv
	OpGE
	OpGT
	OpLE
	OpLT
)

// UnOp is an element-wise unary operator.
type UnOp uint8

// Unary operators.
const (
	OpNeg UnOp = iota
	OpExp
	OpLog
	OpSqrt
	OpSquare
	OpAbs
)

// Pool is a max-pooling geometry (no padding).
type Pool struct {
	N, C, H, W     int // input
	OH, OW         int // output
	KH, KW, SH, SW int // kernel and stride
}

// Conv is a stride-1 convolution geometry with square kernels.
type Conv struct {
	N, C, H, W int // input
	O, K, Pad  int
	OH, OW     int
}

// KDim is the rows of the column matrix (C·K·K).
func (c Conv) KDim() int { return c.C * c.K * c.K }

// PDim is the output positions per image (OH·OW).
func (c Conv) PDim() int { return c.OH * c.OW }

// Norm is a batch-norm geometry: x is N×C×HW.
type Norm struct {
	N, C, HW          int
	Momentum, Epsilon float32
}

// Backend is the set of kernels the executor needs. Kernels are queued in
// order; an error (a failed launch, an out-of-memory) is kept and returned
// by the next Sync, Download or Err.
type Backend interface {
	// Name is "cpu" or "cuda:N".
	Name() string
	// Alloc returns a zeroed buffer of n floats.
	Alloc(n int) (Buf, error)
	// Free releases every buffer.
	Close() error
	Upload(dst Buf, src []float32)
	Download(dst []float32, src Buf) error
	Err() error

	Fill(dst Buf, n int, v float32)
	// Binary: out = a op b over n elements; a scalar operand (aScalar,
	// bScalar) is read at index 0.
	Binary(op BinOp, a, b, out Buf, n int, aScalar, bScalar bool)
	Unary(op UnOp, a, out Buf, n int)
	// Gemm: C (m×n) = op(A) · op(B) + beta·C, row-major.
	Gemm(transA, transB bool, m, n, k int, a, b, c Buf, beta float32)
	// Repeat broadcasts in (outer×1×inner) to out (outer×rep×inner).
	Repeat(in, out Buf, outer, rep, inner int)
	// Sum reduces in (outer×red×inner) to out (outer×inner).
	Sum(in, out Buf, outer, red, inner int)
	// Softmax of rows×cols along the rows (log-softmax when log).
	Softmax(in, out Buf, rows, cols int, log bool)
	// SoftmaxGrad: dx from the softmax output y and the gradient g.
	SoftmaxGrad(y, g, out Buf, rows, cols int, log bool)
	// MaxPool writes the pooled values and, per output, the index of the
	// winner inside its window.
	MaxPool(in, out, idx Buf, p Pool)
	MaxPoolGrad(g, idx, out Buf, p Pool)
	// BatchNorm normalises x per channel. In training it writes the batch
	// mean and 1/σ to save (2·C) and updates running (mean then variance,
	// 2·C); otherwise it uses running.
	BatchNorm(x, out, save, running Buf, p Norm, training bool)
	BatchNormGrad(x, g, out, save Buf, p Norm)
	// Im2col writes the columns of the whole batch as KDim × (N·PDim).
	Im2col(x, cols Buf, p Conv)
	// Col2im adds columns (KDim × N·PDim) back onto a zeroed image batch.
	Col2im(cols, x Buf, p Conv)
	// Swap01 permutes in (A×B×C) to out (B×A×C); bias (length A, or NoBuf)
	// is added along the A axis.
	Swap01(in, out Buf, a, b, c int, bias Buf)
	Adam(p, g, m, v Buf, n int, a optim.AdamStep)
	SGD(p, g, vel Buf, n int, lr, momentum, decay float32)
}

// NoBuf marks an absent optional buffer.
const NoBuf Buf = -1
