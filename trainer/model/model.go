// Package model builds the networks gpuwizard trains as gorgonia graphs:
// an MLP, LeNet-5 and a small CNN with conv-batchnorm-relu blocks. A Net
// holds a training graph (forward, loss and gradients) and an evaluation
// graph (forward only) that share the parameter tensors.
package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"gpuwizard/trainer/exec"
)

// ErrModel is returned (wrapped) for an invalid model specification.
var ErrModel = errors.New("model")

// Kinds of model.
const (
	MLP   = "mlp"
	LeNet = "lenet"
	CNN   = "cnn"
)

// Kinds lists the model kinds, for help texts and validation: the
// classifiers, then the detectors (DetectKinds).
var Kinds = []string{MLP, LeNet, CNN, DetN, DetS}

// ClassifyKinds lists the classifiers.
var ClassifyKinds = []string{MLP, LeNet, CNN}

// Spec describes the network to build.
type Spec struct {
	Kind     string // MLP, LeNet, CNN, or a detector (DetN, DetS)
	Channels int    // 1 (grey) or 3 (colour)
	Height   int
	Width    int
	Classes  int
	Hidden   int // MLP hidden width; 0 = 256
}

// Validate checks that the spec can be built and says which field is wrong.
func (s Spec) Validate() error {
	switch s.Kind {
	case MLP, LeNet, CNN:
	case DetN, DetS:
		return s.validateDetector()
	default:
		return fmt.Errorf("%w: model %q is not one of mlp, lenet, cnn, det-n, det-s", ErrModel, s.Kind)
	}
	if s.Channels != 1 && s.Channels != 3 {
		return fmt.Errorf("%w: %d channels: images must be grey (1) or colour (3)", ErrModel, s.Channels)
	}
	if s.Classes < 2 || s.Classes > 1000 {
		return fmt.Errorf("%w: %d classes: need 2 to 1000", ErrModel, s.Classes)
	}
	if s.Height < 8 || s.Width < 8 || s.Height > 256 || s.Width > 256 {
		return fmt.Errorf("%w: image size %dx%d: must be between 8 and 256 pixels a side", ErrModel, s.Width, s.Height)
	}
	if s.Kind == LeNet && (s.Height != 28 || s.Width != 28) {
		return fmt.Errorf("%w: lenet takes 28x28 images (got %dx%d): set image size 28, or use cnn", ErrModel, s.Width, s.Height)
	}
	if s.Kind == CNN && (s.Height%4 != 0 || s.Width%4 != 0) {
		return fmt.Errorf("%w: cnn needs an image size divisible by 4 (got %dx%d)", ErrModel, s.Width, s.Height)
	}
	return nil
}

// Param is one trainable tensor.
type Param struct {
	Name  string
	Shape []int
	Data  []float32 // shared by both graphs; the optimiser updates it in place
	train *G.Node
	eval  *G.Node
}

// Grad returns the gradient the last training step accumulated.
func (p *Param) Grad() []float32 {
	if p.train == nil {
		return nil
	}
	g, err := p.train.Grad()
	if err != nil || g == nil {
		return nil
	}
	return g.Data().([]float32)
}

// State is extra non-trainable state saved in checkpoints (batch-norm
// running statistics).
type State struct {
	Name string
	Data []float32
}

// graph is one compiled graph: inputs, outputs and its machine.
type graph struct {
	g      *G.ExprGraph
	x, y   *G.Node
	logits *G.Node
	loss   *G.Node
	bn     []*bnOp
	grads  G.Nodes // the gradient of each parameter (training graph)
	vm     G.VM    // the tape machine, made on the first run (the tests' oracle)
	bind   G.Nodes // the parameters whose gradients the tape keeps (training graph)
	xT, yT *tensor.Dense
}

// Net is a model ready to train and evaluate on batches of a fixed size.
type Net struct {
	Spec   Spec
	Batch  int
	Params []*Param
	train  *graph
	eval   *graph
	// released: the gorgonia graphs were dropped (ReleaseGraphs).
	released bool
}

// ErrReleased is returned by TrainStep and Predict after ReleaseGraphs.
var ErrReleased = errors.New("model: the graphs were released to the executor")

// ReleaseGraphs drops the gorgonia graphs once an executor has planned
// them: the executor keeps what it needs (the parameters' data and the
// batch-norm ops, which stay), and the graphs' own tensors (node values,
// the max-pool masks gorgonia allocates at build: some 30 MiB for the CNN
// at 48×48) can be freed. TrainStep and Predict fail afterwards.
func (n *Net) ReleaseGraphs() {
	for _, gr := range []*graph{n.train, n.eval} {
		if gr.vm != nil {
			gr.vm.Close()
		}
		gr.g, gr.x, gr.y, gr.logits, gr.loss, gr.grads, gr.vm, gr.bind, gr.xT, gr.yT = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
	}
	for _, p := range n.Params {
		p.train, p.eval = nil, nil
	}
	n.released = true
}

// Build makes the network with parameters drawn from seed.
func Build(spec Spec, batch int, seed int64) (*Net, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if batch < 1 || batch > 4096 {
		return nil, fmt.Errorf("%w: batch size %d: must be 1 to 4096", ErrModel, batch)
	}
	n := &Net{Spec: spec, Batch: batch}
	rng := rand.New(rand.NewSource(seed))
	var err error
	if n.train, err = n.build(true, rng); err != nil {
		return nil, err
	}
	if n.eval, err = n.build(false, nil); err != nil {
		return nil, err
	}
	return n, nil
}

// builder adds layers to one graph, creating parameters on the first
// (training) graph and reusing their data on the second.
type builder struct {
	n     *Net
	g     *G.ExprGraph
	train bool
	rng   *rand.Rand
	idx   int
	bn    []*bnOp
	err   error
}

func (b *builder) param(name string, shape []int, fanIn int, init string) *G.Node {
	var p *Param
	if b.train {
		size := 1
		for _, d := range shape {
			size *= d
		}
		data := make([]float32, size)
		switch init {
		case "he":
			std := math.Sqrt(2 / float64(fanIn))
			for i := range data {
				data[i] = float32(b.rng.NormFloat64() * std)
			}
		case "one":
			for i := range data {
				data[i] = 1
			}
		case "head":
			for i := range data {
				data[i] = float32(b.rng.NormFloat64() * detHeadStd)
			}
		case "head-bias": // the box channels 0; objectness and classes their prior
			for i := 4; i < len(data); i++ {
				data[i] = detPriorLogit
			}
		}
		p = &Param{Name: name, Shape: shape, Data: data}
		b.n.Params = append(b.n.Params, p)
	} else {
		p = b.n.Params[b.idx]
		b.idx++
	}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(p.Data))
	node := G.NewTensor(b.g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	if b.train {
		p.train = node
	} else {
		p.eval = node
	}
	return node
}

func (b *builder) must(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return n
}

// conv adds a stride-1 convolution (convOp), with a bias unless a batch
// norm follows (which would cancel it: its gradient is zero, only rounding
// noise that Adam would amplify into steps).
func (b *builder) conv(x *G.Node, name string, in, out, k, pad, stride int, bias bool) *G.Node {
	if b.err != nil {
		return x
	}
	wInit, bInit := "he", "zero"
	if name == detHead && b.n.Spec.IsDetector() {
		wInit, bInit = "head", "head-bias"
	}
	w := b.param(name+".w", []int{out, in, k, k}, in*k*k, wInit)
	s := x.Shape()
	op := newConvOp(s[0], in, s[2], s[3], out, k, pad, stride)
	op.dataInput = x.Name() == "x"
	if !bias {
		return b.must(G.ApplyOp(op, x, w))
	}
	op.bias = true
	bb := b.param(name+".b", []int{1, out, 1, 1}, 1, bInit)
	return b.must(G.ApplyOp(op, x, w, bb))
}

func (b *builder) dense(x *G.Node, name string, in, out int) *G.Node {
	if b.err != nil {
		return x
	}
	w := b.param(name+".w", []int{in, out}, in, "he")
	bb := b.param(name+".b", []int{1, out}, 1, "zero")
	y := b.must(G.Mul(x, w))
	return b.must(G.BroadcastAdd(y, bb, nil, []byte{0}))
}

func (b *builder) batchNorm(x *G.Node, name string, c int) *G.Node {
	if b.err != nil {
		return x
	}
	scale := b.param(name+".gamma", []int{1, c, 1, 1}, 1, "one")
	shift := b.param(name+".beta", []int{1, c, 1, 1}, 1, "zero")
	s := x.Shape()
	op := newBNOp(s[0], c, s[2]*s[3])
	if !b.train {
		op.training = false
	}
	b.bn = append(b.bn, op)
	y := b.must(G.ApplyOp(op, x))
	y = b.must(G.BroadcastHadamardProd(y, scale, nil, []byte{0, 2, 3}))
	return b.must(G.BroadcastAdd(y, shift, nil, []byte{0, 2, 3}))
}

func (b *builder) relu(x *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(G.Rectify(x))
}

// layer adds one layer of Spec.Layers to the graph.
func (b *builder) layer(x *G.Node, l Layer) *G.Node {
	switch l.Op {
	case LayerConv:
		return b.conv(x, l.Name, l.In, l.Out, l.K, l.Pad, l.Stride, l.Bias)
	case LayerBatchNorm:
		return b.batchNorm(x, l.Name, l.Out)
	case LayerReLU:
		return b.relu(x)
	case LayerSiLU:
		return b.silu(x)
	case LayerMaxPool:
		return b.pool(x)
	case LayerFlatten:
		return b.flatten(x)
	case LayerDense:
		return b.dense(x, l.Name, l.In, l.Out)
	case LayerGlobalAvgPool:
		return b.globalAvgPool(x)
	}
	if b.err == nil {
		b.err = fmt.Errorf("unknown layer %q", l.Op)
	}
	return x
}

// flatten makes an N×… tensor N×(the rest); a matrix stays as it is.
func (b *builder) flatten(x *G.Node) *G.Node {
	s := x.Shape()
	if b.err != nil || len(s) == 2 {
		return x
	}
	return b.must(G.Reshape(x, tensor.Shape{s[0], s.TotalSize() / s[0]}))
}

// globalAvgPool averages each channel's plane: N×C×H×W to N×C. Not
// G.Mean(h, 2, 3): gorgonia.org/tensor v0.9.24 sums a middle axis of a
// 4-D tensor wrongly for some shapes (N×C×4×4 along 2 and 3 gives wrong
// values), so the plane is flattened and the last axis reduced.
func (b *builder) globalAvgPool(x *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	s := x.Shape()
	x = b.must(G.Reshape(x, tensor.Shape{s[0], s[1], s[2] * s[3]}))
	return b.must(G.Mean(x, 2))
}

func (b *builder) pool(x *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(G.MaxPool2D(x, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
}

func (n *Net) build(train bool, rng *rand.Rand) (*graph, error) {
	s, bs := n.Spec, n.Batch
	g := G.NewGraph()
	b := &builder{n: n, g: g, train: train, rng: rng}
	gr := &graph{g: g}
	var x *G.Node
	if s.Kind == MLP { // the MLP takes its images flat
		x = G.NewMatrix(g, tensor.Float32, G.WithShape(bs, s.Channels*s.Height*s.Width), G.WithName("x"))
	} else {
		x = G.NewTensor(g, tensor.Float32, 4, G.WithShape(bs, s.Channels, s.Height, s.Width), G.WithName("x"))
	}
	logits := x
	for _, l := range s.Layers() {
		logits = b.layer(logits, l)
	}
	if b.err != nil {
		return nil, fmt.Errorf("%w: building %s: %w", ErrModel, s.Kind, b.err)
	}
	gr.x, gr.logits, gr.bn = x, logits, b.bn
	gr.xT = tensor.New(tensor.WithShape(x.Shape()...), tensor.Of(tensor.Float32))
	if err := G.Let(gr.x, gr.xT); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	if train && s.IsDetector() {
		if err := n.detLoss(g, gr, logits); err != nil {
			return nil, fmt.Errorf("%w: building the detection loss: %w", ErrModel, err)
		}
	} else if train {
		// Only the training graph has labels and a loss.
		gr.y = G.NewMatrix(g, tensor.Float32, G.WithShape(bs, s.Classes), G.WithName("y"))
		gr.yT = tensor.New(tensor.WithShape(bs, s.Classes), tensor.Of(tensor.Float32))
		if err := G.Let(gr.y, gr.yT); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrModel, err)
		}
		// Cross-entropy of the softmax: -mean over the batch of Σ y·log softmax(z).
		logp, err := G.LogSoftMax(logits)
		if err == nil {
			var prod, sum, mean *G.Node
			if prod, err = G.HadamardProd(gr.y, logp); err == nil {
				if sum, err = G.Sum(prod, 1); err == nil {
					if mean, err = G.Mean(sum); err == nil {
						gr.loss, err = G.Neg(mean)
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: building the loss: %w", ErrModel, err)
		}
	}
	if train {
		var nodes G.Nodes
		for _, p := range n.Params {
			nodes = append(nodes, p.train)
		}
		var err error
		if gr.grads, err = G.Grad(gr.loss, nodes...); err != nil {
			return nil, fmt.Errorf("%w: differentiating: %w", ErrModel, err)
		}
		gr.bind = nodes
	}
	return gr, nil
}

// InputSize is the number of floats of one example.
func (n *Net) InputSize() int { return n.Spec.Channels * n.Spec.Height * n.Spec.Width }

// run runs the graph on gorgonia's tape machine, made on the first call:
// the executor plans the graphs without it.
func (gr *graph) run(x, y []float32) error {
	if gr.vm == nil {
		if gr.bind != nil {
			gr.vm = G.NewTapeMachine(gr.g, G.BindDualValues(gr.bind...))
		} else {
			gr.vm = G.NewTapeMachine(gr.g)
		}
	}
	copy(gr.xT.Data().([]float32), x)
	if gr.yT != nil {
		copy(gr.yT.Data().([]float32), y)
	}
	err := gr.vm.RunAll()
	gr.vm.Reset()
	return err
}

// TrainStep runs forward and backward on one batch (x: Batch×InputSize,
// y: one-hot Batch×Classes), leaves the gradients in each Param's Grad, and
// returns the loss and the logits (valid until the next call).
func (n *Net) TrainStep(x, y []float32) (float32, []float32, error) {
	if n.released {
		return 0, nil, ErrReleased
	}
	if err := n.checkBatch(x, y); err != nil {
		return 0, nil, err
	}
	if err := n.train.run(x, y); err != nil {
		return 0, nil, fmt.Errorf("%w: training step: %w", ErrModel, err)
	}
	return n.train.loss.Value().Data().(float32), n.train.logits.Value().Data().([]float32), nil
}

// Predict runs the evaluation graph (batch-norm with running statistics) and
// returns the logits (valid until the next call).
func (n *Net) Predict(x []float32) ([]float32, error) {
	if n.released {
		return nil, ErrReleased
	}
	if len(x) != n.Batch*n.InputSize() {
		return nil, fmt.Errorf("%w: batch of %d inputs, want %d", ErrModel, len(x), n.Batch*n.InputSize())
	}
	n.syncStats()
	if err := n.eval.run(x, nil); err != nil {
		return nil, fmt.Errorf("%w: evaluation: %w", ErrModel, err)
	}
	return n.eval.logits.Value().Data().([]float32), nil
}

func (n *Net) checkBatch(x, y []float32) error {
	if len(x) != n.Batch*n.InputSize() || len(y) != n.Batch*n.Spec.LabelSize() {
		return fmt.Errorf("%w: batch of %d inputs and %d labels, want %d and %d", ErrModel, len(x), len(y), n.Batch*n.InputSize(), n.Batch*n.Spec.LabelSize())
	}
	return nil
}

// syncStats copies the batch-norm running statistics to the eval graph.
func (n *Net) syncStats() {
	for i, op := range n.train.bn {
		copy(n.eval.bn[i].running, op.running)
	}
}

// States returns the batch-norm running statistics, for checkpoints.
func (n *Net) States() []State {
	var out []State
	for i, op := range n.train.bn {
		out = append(out,
			State{Name: fmt.Sprintf("bn%d.mean", i), Data: append([]float32(nil), op.running[:op.c]...)},
			State{Name: fmt.Sprintf("bn%d.var", i), Data: append([]float32(nil), op.running[op.c:]...)})
	}
	return out
}

// SetStates restores batch-norm statistics saved by States.
func (n *Net) SetStates(st []State) error {
	if len(st) != 2*len(n.train.bn) {
		return fmt.Errorf("%w: %d saved statistics for %d batch-norm layers", ErrModel, len(st), len(n.train.bn))
	}
	for i, op := range n.train.bn {
		if len(st[2*i].Data) != op.c || len(st[2*i+1].Data) != op.c {
			return fmt.Errorf("%w: batch-norm %d statistics have the wrong size", ErrModel, i)
		}
		copy(op.running[:op.c], st[2*i].Data)
		copy(op.running[op.c:], st[2*i+1].Data)
	}
	return nil
}

// RandomBatch draws one batch from rng: inputs uniform in [0, 1) and one-hot
// labels, the workload of `gpuwizard bench` and of time estimates.
func (n *Net) RandomBatch(rng *rand.Rand) (x, y []float32) {
	x = make([]float32, n.Batch*n.InputSize())
	y = make([]float32, n.Batch*n.Spec.LabelSize())
	for i := range x {
		x[i] = rng.Float32()
	}
	if n.Spec.IsDetector() {
		n.randomTargets(rng, y)
		return x, y
	}
	for i := 0; i < n.Batch; i++ {
		y[i*n.Spec.Classes+rng.Intn(n.Spec.Classes)] = 1
	}
	return x, y
}

// ExecGraphs describes the training graph (inputs x and y; outputs loss and
// logits; the gradient of every parameter) and the evaluation graph (input
// x; output logits) for the executor. A detector's training graph outputs
// its three loss terms (box, class, objectness) in place of logits, and
// its evaluation graph the raw head (N×(5+classes)×H/8×W/8).
func (n *Net) ExecGraphs() (train, eval exec.Graph) {
	var tp, ep []*G.Node
	for _, p := range n.Params {
		tp = append(tp, p.train)
		ep = append(ep, p.eval)
	}
	train = exec.Graph{G: n.train.g, Inputs: []*G.Node{n.train.x, n.train.y}, Params: tp,
		Grads: n.train.grads, Outputs: []*G.Node{n.train.loss, n.train.logits}}
	eval = exec.Graph{G: n.eval.g, Inputs: []*G.Node{n.eval.x}, Params: ep, Outputs: []*G.Node{n.eval.logits}}
	return train, eval
}
