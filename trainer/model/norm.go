package model

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"gpuwizard/trainer/exec"
)

// bnOp is batch normalisation without scale and shift (those are separate
// broadcast ops) for N×C×H×W float32 tensors. gorgonia v0.9.18's
// BatchNormOp cannot serve: under the tape machine its UsePreallocDo
// scales whatever the output register held before instead of the input,
// so its output is wrong (see TestBatchNormNormalises). The arithmetic is
// the executor's, so the CPU graph and every backend agree.
type bnOp struct {
	n, c, hw      int
	momentum, eps float32
	training      bool
	running       []float32 // mean then variance, 2·C
	save          []float32 // batch mean then 1/σ, 2·C, valid after Do
}

func newBNOp(n, c, hw int) *bnOp {
	op := &bnOp{n: n, c: c, hw: hw, momentum: 0.1, eps: BatchNormEpsilon, training: true,
		running: make([]float32, 2*c), save: make([]float32, 2*c)}
	for i := c; i < 2*c; i++ {
		op.running[i] = 1
	}
	return op
}

func (op *bnOp) norm() exec.Norm {
	return exec.Norm{N: op.n, C: op.c, HW: op.hw, Momentum: op.momentum, Epsilon: op.eps}
}

// NormParams and NormRunning implement exec.NormOp.
func (op *bnOp) NormParams() (momentum, eps float32, training bool) {
	return op.momentum, op.eps, op.training
}
func (op *bnOp) NormRunning() []float32 { return op.running }

func (op *bnOp) Arity() int           { return 1 }
func (op *bnOp) Type() hm.Type        { return hm.NewFnType(t4(), t4()) }
func (op *bnOp) ReturnsPtr() bool     { return false }
func (op *bnOp) CallsExtern() bool    { return false }
func (op *bnOp) OverwritesInput() int { return -1 }
func (op *bnOp) String() string {
	return fmt.Sprintf("BatchNorm(%d channels, training %v)", op.c, op.training)
}
func (op *bnOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", op) }
func (op *bnOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *bnOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("batch norm: %d inputs, want 1", len(ds))
	}
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("batch norm: input shape %v", ds[0])
	}
	return s.Clone(), nil
}

func (op *bnOp) DiffWRT(int) []bool { return []bool{true} }

func (op *bnOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&bnGradOp{fwd: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *bnOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.n, op.c, op.hw), tensor.Of(tensor.Float32))
	if len(vals) == 1 {
		out.Reshape(vals[0].Shape()...)
	}
	return op.UsePreallocDo(out, vals...)
}

func (op *bnOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 1 || vals[0].Shape().TotalSize() != op.n*op.c*op.hw {
		return nil, fmt.Errorf("batch norm: want one input of %d values", op.n*op.c*op.hw)
	}
	exec.BatchNormCPU(f32(vals[0]), f32(prealloc), op.save, op.running, op.norm(), op.training)
	return prealloc, nil
}

// bnGradOp is bnOp's gradient in training: inputs x and dy.
type bnGradOp struct{ fwd *bnOp }

// NormForward implements exec.NormGradOp.
func (g *bnGradOp) NormForward() exec.NormOp { return g.fwd }

func (g *bnGradOp) Arity() int            { return 2 }
func (g *bnGradOp) Type() hm.Type         { return hm.NewFnType(t4(), t4(), t4()) }
func (g *bnGradOp) ReturnsPtr() bool      { return false }
func (g *bnGradOp) CallsExtern() bool     { return false }
func (g *bnGradOp) OverwritesInput() int  { return -1 }
func (g *bnGradOp) String() string        { return fmt.Sprintf("∂BatchNorm(%d channels)", g.fwd.c) }
func (g *bnGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", g) }
func (g *bnGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	g.WriteHash(h)
	return h.Sum32()
}
func (g *bnGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return g.fwd.InferShape(ds[:1]...)
}

func (g *bnGradOp) Do(vals ...G.Value) (G.Value, error) {
	if len(vals) != 2 {
		return nil, fmt.Errorf("batch norm gradient: %d inputs, want 2", len(vals))
	}
	out := tensor.New(tensor.WithShape(vals[0].Shape()...), tensor.Of(tensor.Float32))
	return g.UsePreallocDo(out, vals...)
}

func (g *bnGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	n := g.fwd.n * g.fwd.c * g.fwd.hw
	if len(vals) != 2 || vals[0].Shape().TotalSize() != n || vals[1].Shape().TotalSize() != n {
		return nil, fmt.Errorf("batch norm gradient: want two inputs of %d values", n)
	}
	exec.BatchNormGradCPU(f32(vals[0]), f32(vals[1]), f32(prealloc), g.fwd.save, g.fwd.norm())
	return prealloc, nil
}
