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

// siluOp is SiLU, x·σ(x), on an N×C×H×W float32 tensor: one kernel
// (exec.OpSiLU) where gorgonia would chain a sigmoid and a product, each
// with its own buffer and gradient.
type siluOp struct{ shape tensor.Shape }

func (op *siluOp) Arity() int            { return 1 }
func (op *siluOp) Type() hm.Type         { return hm.NewFnType(t4(), t4()) }
func (op *siluOp) ReturnsPtr() bool      { return false }
func (op *siluOp) CallsExtern() bool     { return false }
func (op *siluOp) OverwritesInput() int  { return -1 }
func (op *siluOp) String() string        { return "SiLU" }
func (op *siluOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", op) }
func (op *siluOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *siluOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape.Clone(), nil }

// UnaryKernel implements exec.UnaryKernelOp.
func (op *siluOp) UnaryKernel() exec.UnOp { return exec.OpSiLU }

func (op *siluOp) DiffWRT(int) []bool { return []bool{true} }

func (op *siluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&siluGradOp{shape: op.shape}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *siluOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.shape...), tensor.Of(tensor.Float32))
	return op.UsePreallocDo(out, vals...)
}

func (op *siluOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 1 || vals[0].Shape().TotalSize() != op.shape.TotalSize() {
		return nil, fmt.Errorf("silu: want one input of %d values", op.shape.TotalSize())
	}
	exec.SiLUTo(f32(prealloc), f32(vals[0]))
	return prealloc, nil
}

// siluGradOp is SiLU's gradient: inputs x and dy.
type siluGradOp struct{ shape tensor.Shape }

func (op *siluGradOp) Arity() int            { return 2 }
func (op *siluGradOp) Type() hm.Type         { return hm.NewFnType(t4(), t4(), t4()) }
func (op *siluGradOp) ReturnsPtr() bool      { return false }
func (op *siluGradOp) CallsExtern() bool     { return false }
func (op *siluGradOp) OverwritesInput() int  { return -1 }
func (op *siluGradOp) String() string        { return "∂SiLU" }
func (op *siluGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", op) }
func (op *siluGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *siluGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape.Clone(), nil }

// BinaryKernel implements exec.BinaryKernelOp.
func (op *siluGradOp) BinaryKernel() exec.BinOp { return exec.OpSiLUGrad }

func (op *siluGradOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.shape...), tensor.Of(tensor.Float32))
	return op.UsePreallocDo(out, vals...)
}

func (op *siluGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	n := op.shape.TotalSize()
	if len(vals) != 2 || vals[0].Shape().TotalSize() != n || vals[1].Shape().TotalSize() != n {
		return nil, fmt.Errorf("silu gradient: want two inputs of %d values", n)
	}
	exec.SiLUGradTo(f32(prealloc), f32(vals[0]), f32(vals[1]))
	return prealloc, nil
}

func (b *builder) silu(x *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(G.ApplyOp(&siluOp{shape: x.Shape().Clone()}, x))
}
