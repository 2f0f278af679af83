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
	// OpSiLUGrad is the gradient of SiLU: a is SiLU's input x, b the
	// gradient g of its output; out = g·σ(x)·(1 + x·(1 − σ(x))).
	OpSiLUGrad
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
	// OpSiLU is x·σ(x) (SiLU, or swish), the detector's activation.
	OpSiLU
)

// Pool is a max-pooling geometry (no padding).
type Pool struct {
	N, C, H, W     int // input
	OH, OW         int // output
	KH, KW, SH, SW int // kernel and stride
}

// Conv is a convolution geometry with square kernels: stride Stride (0
// or 1: stride 1), zero padding Pad, OH = (H + 2·Pad − K)/Stride + 1.
type Conv struct {
	N, C, H, W int // input
	O, K, Pad  int
	OH, OW     int
	Stride     int
}

// S is the stride (1 when Stride is 0).
func (c Conv) S() int { return max(c.Stride, 1) }

// KDim is the rows of the column matrix (C·K·K).
func (c Conv) KDim() int { return c.C * c.K * c.K }

// PDim is the output positions per image (OH·OW).
func (c Conv) PDim() int { return c.OH * c.OW }

// Norm is a batch-norm geometry: x is N×C×HW.
type Norm struct {
	N, C, HW          int
	Momentum, Epsilon float32
	// Part, where not 0, says x (and dz, dx) of NormSiLU and
	// NormSiLUGrad lie as the convolution before them computes them:
	// the batch in parts of Part images (the last may hold fewer), each
	// part C × (its images·HW) (see Norm.Plane).
	Part int
}

// Plane is where image n's values of channel c start: N×C×HW, or in
// parts (see Part).
func (p Norm) Plane(n, c int) int {
	if p.Part == 0 {
		return (n*p.C + c) * p.HW
	}
	n0 := n / p.Part * p.Part
	nk := min(p.Part, p.N-n0)
	return (n0*p.C+c*nk)*p.HW + (n-n0)*p.HW
}

// Det is the geometry of a detection head and its loss (see DetLoss): the
// head is N×(5+Classes)×H×W, per cell the box (dx, dy, tw, th), the
// objectness logit and one logit per class; the targets are N×H×W cells of
// DetTargetFloats each. The gains weigh the loss terms.
type Det struct {
	N, Classes, H, W int
	GIoU, L1         float32 // the box term: GIoU·(1 − GIoU(pred, target)) + L1·Σ|raw − target|
	Cls, Obj         float32 // the class and objectness BCE terms
}

// Cells is the number of cells of the batch (N·H·W).
func (d Det) Cells() int { return d.N * d.H * d.W }

// Channels is the head's channels per cell (5 + Classes).
func (d Det) Channels() int { return 5 + d.Classes }

// A detection target is DetTargetFloats floats per cell (package detect
// writes them, detect.TargetFloats): the objectness target, the
// objectness weight, the positive weight (0 for a cell that predicts no
// box), the class index, and the box the cell must predict as x1, y1, x2,
// y2 in strides from the cell's centre. A cell's predicted box is
// (dx − w/2, dy − h/2, dx + w/2, dy + h/2) with w = exp(tw), h = exp(th),
// tw and th clamped to ±DetLogClamp; its L1 target is the target box's
// centre and log size.
const (
	DetTargetFloats = 8
	DetLogClamp     = 8
)

// Epilogue is what a kernel does to each value v it writes at index i:
// v = v·Scale[c] + Bias[c] with c = (i/Inner) mod C (Scale and Bias are
// NoBuf when absent), then, when Mask is set, gorgonia's Rectify
// (x ⊙ (x ≥ 0)) keeping its mask for the gradient: Mask[i] = 1 if v ≥ 0
// else 0, and v·Mask[i] is written. The planner fuses a broadcast bias or
// scale and a ReLU into the kernel that produces their input this way.
type Epilogue struct {
	Scale, Bias Buf
	Inner, C    int
	Mask        Buf
}

// Plain is the epilogue that writes values unchanged.
func Plain() Epilogue { return Epilogue{Scale: NoBuf, Bias: NoBuf, Inner: 1, C: 1, Mask: NoBuf} }

// IsPlain says whether e changes nothing.
func (e Epilogue) IsPlain() bool { return e.Scale == NoBuf && e.Bias == NoBuf && e.Mask == NoBuf }

// Optimiser scalars, read by the Adam and SGD kernels from a buffer (so a
// step captured once reads each step's learning rate): Adam's are
// β1, β2, step, ε, decay (optim.AdamStep), SGD's lr, momentum, decay.
const (
	AdamScalars = 5
	SGDScalars  = 3
)

// PutAdam writes a's scalars into dst[:AdamScalars].
func PutAdam(dst []float32, a optim.AdamStep) {
	dst[0], dst[1], dst[2], dst[3], dst[4] = a.Beta1, a.Beta2, a.Step, a.Eps, a.Decay
}

// PutSGD writes SGD's scalars into dst[:SGDScalars].
func PutSGD(dst []float32, lr, momentum, decay float32) {
	dst[0], dst[1], dst[2] = lr, momentum, decay
}

// Backend is the set of kernels the executor needs. Kernels are queued in
// order; an error (a failed launch, an out-of-memory) is kept and returned
// by the next Sync, Download or Err.
type Backend interface {
	// Name is "cpu" or "cuda:N".
	Name() string
	// Alloc returns a zeroed buffer of n floats.
	Alloc(n int) (Buf, error)
	// View returns n floats of parent from offset off as a buffer of its
	// own (writes to one are writes to the other): parameters, gradients
	// and inputs live in one block each, so one kernel or one copy serves
	// them all.
	View(parent Buf, off, n int) (Buf, error)
	// Close releases every buffer.
	Close() error
	Upload(dst Buf, src []float32)
	Download(dst []float32, src Buf) error
	Err() error

	Fill(dst Buf, n int, v float32)
	// Binary: out = a op b over n elements; a scalar operand (aScalar,
	// bScalar) is read at index 0.
	Binary(op BinOp, a, b, out Buf, n int, aScalar, bScalar bool)
	Unary(op UnOp, a, out Buf, n int)
	// Apply writes out = e(in) over n elements.
	Apply(in, out Buf, n int, e Epilogue)
	// Gemm: C (m×n) = op(A) · op(B) + beta·C, row-major.
	Gemm(transA, transB bool, m, n, k int, a, b, c Buf, beta float32)
	// Repeat broadcasts in (outer×1×inner) to out (outer×rep×inner).
	Repeat(in, out Buf, outer, rep, inner int)
	// Sum reduces in (outer×red×inner) to out (outer×inner).
	Sum(in, out Buf, outer, red, inner int)
	// SumKeep reduces in (outer×keep×inner) to out (keep): the sum over
	// the outer and inner axes (a per-channel sum of an N×C×H×W tensor).
	SumKeep(in, out Buf, outer, keep, inner int)
	// Softmax of rows×cols along the rows (log-softmax when log).
	Softmax(in, out Buf, rows, cols int, log bool)
	// SoftmaxGrad: dx from the softmax output y and the gradient g.
	SoftmaxGrad(y, g, out Buf, rows, cols int, log bool)
	// MaxPool writes the pooled values and, per output, the index of the
	// winner inside its window.
	MaxPool(in, out, idx Buf, p Pool)
	// MaxPoolGrad routes g back to each window's winner (summing where
	// windows overlap), times mask (a ReLU's, or NoBuf) element-wise. It
	// writes every element of out: no fill is needed first.
	MaxPoolGrad(g, idx, mask, out Buf, p Pool)
	// BatchNorm normalises x per channel. In training it writes the batch
	// mean and 1/σ to save (2·C) and updates running (mean then variance,
	// 2·C); otherwise it uses running.
	BatchNorm(x, out, save, running Buf, p Norm, training bool)
	BatchNormGrad(x, g, out, save Buf, p Norm)
	// Im2col writes the columns of the whole batch as KDim × (N·PDim).
	Im2col(x, cols Buf, p Conv)
	// Col2im writes the image batch from its columns (KDim × N·PDim),
	// adding where windows overlap: the adjoint of Im2col.
	Col2im(cols, x Buf, p Conv)
	// Swap01 permutes in (A×B×C) to out (B×A×C) and applies e by the
	// index in out (a convolution's bias and ReLU: Inner C, C A).
	Swap01(in, out Buf, a, b, c int, e Epilogue)
	// Adam updates n values of p from g with moments m and v; its
	// scalars are the AdamScalars floats of s.
	Adam(p, g, m, v Buf, n int, s Buf)
	// SGD updates n values of p from g with velocity vel; its scalars are
	// the SGDScalars floats of s.
	SGD(p, g, vel Buf, n int, s Buf)
	// DetLoss writes each cell's loss terms (box, class, objectness:
	// Det.Cells()×3 floats) for head and tgt (see Det); the planner sums
	// them.
	DetLoss(head, tgt, terms Buf, d Det)
	// DetLossGrad writes the head's gradient given g, the gradient of the
	// three summed terms (3 floats, read from the buffer).
	DetLossGrad(head, tgt, g, out Buf, d Det)
}

// Captured is a captured sequence of a backend's work (a CUDA graph).
type Captured uint64

// Async is implemented by a backend whose work runs asynchronously on a
// queue (CUDA): the trainer then keeps a few steps in flight, moves
// batches and results through page-locked memory, and captures the whole
// step once in a graph that it replays every step.
type Async interface {
	// HostAlloc returns n floats of page-locked host memory, valid until
	// the backend closes.
	HostAlloc(n int) ([]float32, error)
	// UploadAsync and DownloadAsync queue copies from and to HostAlloc
	// memory.
	UploadAsync(dst Buf, src []float32)
	DownloadAsync(dst []float32, src Buf)
	// Record marks the queue's position with event ev (0 to 7); Wait
	// blocks until the queue has passed it and returns the queue's error.
	Record(ev int)
	Wait(ev int) error
	// CanCapture says whether Capture works here. Capture records what f
	// queues (nothing runs) as a graph; Replay queues the graph.
	CanCapture() bool
	Capture(f func()) (Captured, error)
	Replay(g Captured)
}

// NoBuf marks an absent optional buffer.
const NoBuf Buf = -1
