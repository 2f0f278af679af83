package model

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
)

// The detectors: anchor-free, one output stride (DetStride). A
// conv-BN-SiLU backbone halves the image three times (stride-2 3×3
// convolutions), a light neck of 3×3 and 1×1 conv-BN-SiLU blocks widens
// what each cell sees, and a 1×1 convolution (with bias) is the head: per
// cell of the H/8×W/8 grid the box (dx, dy, tw, th), the objectness logit
// and one logit per class (package detect: the loss, the targets, the
// decoding).
const (
	DetN = "det-n" // nano: 16-32-64 channels, about 0.1 M parameters
	DetS = "det-s" // small: 24-48-96 channels and a deeper neck
)

// DetStride is the detectors' output stride: a cell is 8×8 pixels.
const DetStride = 8

// The head starts small and unsure: its weights drawn with a standard
// deviation of 0.01 and the objectness and class biases at the logit of
// 1 % (RetinaNet's prior; YOLO's heads start alike), so the first steps
// do not spend themselves pushing every cell's scores down from 50 %.
const (
	detHead       = "head"
	detHeadStd    = 0.01
	detPriorLogit = -4.59512 // log(0.01 / 0.99)
)

// DetectKinds lists the detectors.
var DetectKinds = []string{DetN, DetS}

// IsDetector says whether s describes a detector.
func (s Spec) IsDetector() bool { return s.Kind == DetN || s.Kind == DetS }

// Grid is a detector's output grid (rows, columns).
func (s Spec) Grid() (h, w int) { return s.Height / DetStride, s.Width / DetStride }

// LabelSize is the floats of one image's labels in a training batch: a
// one-hot row for a classifier, a detector's targets (detect.TargetFloats
// per cell of the grid).
func (s Spec) LabelSize() int {
	if s.IsDetector() {
		h, w := s.Grid()
		return h * w * detect.TargetFloats
	}
	return s.Classes
}

// validateDetector checks a detector's spec: square images of 32 to 640
// pixels a side, a multiple of the stride; 1 to 1000 classes.
func (s Spec) validateDetector() error {
	if s.Channels != 1 && s.Channels != 3 {
		return fmt.Errorf("%w: %d channels: images must be grey (1) or colour (3)", ErrModel, s.Channels)
	}
	if s.Classes < 1 || s.Classes > 1000 {
		return fmt.Errorf("%w: %d classes: a detector needs 1 to 1000", ErrModel, s.Classes)
	}
	if s.Height != s.Width || s.Height < 32 || s.Height > 640 || s.Height%DetStride != 0 {
		return fmt.Errorf("%w: image size %dx%d: a detector takes square images of 32 to 640 pixels a side, a multiple of %d (320 is the default)", ErrModel, s.Width, s.Height, DetStride)
	}
	return nil
}

// detectorLayers lists a detector's layers.
func (s Spec) detectorLayers() []Layer {
	widths, neck := []int{16, 32, 64}, 2
	if s.Kind == DetS {
		widths, neck = []int{24, 48, 96}, 3
	}
	var out []Layer
	block := func(name string, in, o, k, stride int) {
		out = append(out, Layer{Op: LayerConv, Name: name, In: in, Out: o, K: k, Pad: k / 2, Stride: stride},
			Layer{Op: LayerBatchNorm, Name: name + ".bn", In: o, Out: o}, Layer{Op: LayerSiLU})
	}
	in := s.Channels
	for i, w := range widths { // stride 2, 4, 8: a stride-2 block, then a 3×3 one (not on the stem)
		block(fmt.Sprintf("down%d", i+1), in, w, 3, 2)
		if i > 0 {
			block(fmt.Sprintf("stage%d", i+1), w, w, 3, 1)
		}
		in = w
	}
	for i := 0; i < neck; i++ {
		block(fmt.Sprintf("neck%d", i+1), in, in, 3, 1)
	}
	block("neck.pw", in, in, 1, 1)
	return append(out, Layer{Op: LayerConv, Name: detHead, In: in, Out: 5 + s.Classes, K: 1, Bias: true})
}

// detLossOp is the detection loss: inputs the head (N×(5+C)×H×W) and the
// targets (N × H·W·detect.TargetFloats), output the box, class and
// objectness terms summed over the batch (3 floats). The arithmetic is
// the executor's (exec.DetLossCPU), so the tape machine and every backend
// agree.
type detLossOp struct {
	d exec.Det
}

// DetGeometry implements exec.DetLossOp.
func (op *detLossOp) DetGeometry() exec.Det { return op.d }

func t1() hm.Type { return G.TensorType{Dims: 1, Of: tensor.Float32} }
func t2() hm.Type { return G.TensorType{Dims: 2, Of: tensor.Float32} }

func (op *detLossOp) Arity() int            { return 2 }
func (op *detLossOp) Type() hm.Type         { return hm.NewFnType(t4(), t2(), t1()) }
func (op *detLossOp) ReturnsPtr() bool      { return false }
func (op *detLossOp) CallsExtern() bool     { return false }
func (op *detLossOp) OverwritesInput() int  { return -1 }
func (op *detLossOp) String() string        { return fmt.Sprintf("DetLoss(%d classes)", op.d.Classes) }
func (op *detLossOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", op) }
func (op *detLossOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *detLossOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{3}, nil }

// DiffWRT: the head only (the targets are data).
func (op *detLossOp) DiffWRT(n int) []bool { return []bool{true, false}[:n] }

func (op *detLossOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dh, err := G.ApplyOp(&detLossGradOp{fwd: op}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dh, nil}, nil
}

func (op *detLossOp) Do(vals ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(3), tensor.Of(tensor.Float32))
	return op.UsePreallocDo(out, vals...)
}

func (op *detLossOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	d := op.d
	if len(vals) != 2 || vals[0].Shape().TotalSize() != d.Cells()*d.Channels() || vals[1].Shape().TotalSize() != d.Cells()*exec.DetTargetFloats {
		return nil, fmt.Errorf("detection loss: want a head of %d values and %d targets", d.Cells()*d.Channels(), d.Cells()*exec.DetTargetFloats)
	}
	sum := exec.DetLossSums(f32(vals[0]), f32(vals[1]), make([]float32, 3*d.Cells()), d)
	out := f32(prealloc)
	for k := range sum {
		out[k] = float32(sum[k])
	}
	return prealloc, nil
}

// detLossGradOp is the loss's gradient by the head: inputs the head, the
// targets and the gradient of the three terms.
type detLossGradOp struct{ fwd *detLossOp }

// DetLossForward implements exec.DetLossGradOp.
func (g *detLossGradOp) DetLossForward() exec.DetLossOp { return g.fwd }

func (g *detLossGradOp) Arity() int            { return 3 }
func (g *detLossGradOp) Type() hm.Type         { return hm.NewFnType(t4(), t2(), t1(), t4()) }
func (g *detLossGradOp) ReturnsPtr() bool      { return false }
func (g *detLossGradOp) CallsExtern() bool     { return false }
func (g *detLossGradOp) OverwritesInput() int  { return -1 }
func (g *detLossGradOp) String() string        { return "∂" + g.fwd.String() }
func (g *detLossGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p", g) }
func (g *detLossGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	g.WriteHash(h)
	return h.Sum32()
}
func (g *detLossGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	d := g.fwd.d
	return tensor.Shape{d.N, d.Channels(), d.H, d.W}, nil
}

func (g *detLossGradOp) Do(vals ...G.Value) (G.Value, error) {
	d := g.fwd.d
	out := tensor.New(tensor.WithShape(d.N, d.Channels(), d.H, d.W), tensor.Of(tensor.Float32))
	return g.UsePreallocDo(out, vals...)
}

func (g *detLossGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	d := g.fwd.d
	if len(vals) != 3 || vals[2].Shape().TotalSize() != 3 {
		return nil, fmt.Errorf("detection loss gradient: want the head, the targets and 3 gradients")
	}
	exec.DetLossGradCPU(f32(vals[0]), f32(vals[1]), f32(vals[2]), f32(prealloc), d, 0, d.Cells())
	return prealloc, nil
}

// DetGeometry is detector s's loss at batch n, with the default gains:
// what its loss node computes (the trainer scores validation heads with
// it too).
func (s Spec) DetGeometry(n int) exec.Det {
	h, w := s.Grid()
	g := detect.DefaultGains()
	return exec.Det{N: n, Classes: s.Classes, H: h, W: w, GIoU: float32(g.GIoU), L1: float32(g.L1), Cls: float32(g.Cls), Obj: float32(g.Obj)}
}

// detLoss adds a detector's training loss to gr: the targets input y, the
// three terms (the training graph's second output, in place of logits)
// and their sum.
func (n *Net) detLoss(g *G.ExprGraph, gr *graph, head *G.Node) error {
	s := n.Spec
	gr.y = G.NewMatrix(g, tensor.Float32, G.WithShape(n.Batch, s.LabelSize()), G.WithName("y"))
	gr.yT = tensor.New(tensor.WithShape(n.Batch, s.LabelSize()), tensor.Of(tensor.Float32))
	if err := G.Let(gr.y, gr.yT); err != nil {
		return err
	}
	terms, err := G.ApplyOp(&detLossOp{d: s.DetGeometry(n.Batch)}, head, gr.y)
	if err != nil {
		return err
	}
	gr.logits = terms
	gr.loss, err = G.Sum(terms)
	return err
}

// randomTargets fills y (one batch of a detector's targets) with a few
// positive cells per image whose boxes lie around them, weighted as
// detect.Assign weighs them: bench and time estimates train on them.
func (n *Net) randomTargets(rng *rand.Rand, y []float32) {
	h, w := n.Spec.Grid()
	cells := h * w
	pos := max(1, cells/16)
	for i := 0; i < n.Batch; i++ {
		for k := 0; k < pos; k++ {
			q := i*cells + rng.Intn(cells)
			t := y[q*detect.TargetFloats : (q+1)*detect.TargetFloats]
			x1, y1 := -rng.Float32()*2, -rng.Float32()*2
			t[detect.TObj], t[detect.TPosWeight], t[detect.TClass] = 1, 1, float32(rng.Intn(n.Spec.Classes))
			t[detect.TX1], t[detect.TY1], t[detect.TX2], t[detect.TY2] = x1, y1, x1+1+rng.Float32()*3, y1+1+rng.Float32()*3
		}
	}
	npos := float32(0)
	for q := 0; q < n.Batch*cells; q++ {
		npos += y[q*detect.TargetFloats+detect.TPosWeight]
	}
	for q := 0; q < n.Batch*cells; q++ {
		t := y[q*detect.TargetFloats : (q+1)*detect.TargetFloats]
		t[detect.TObjWeight] = 1 / npos
		t[detect.TPosWeight] /= npos
	}
}
