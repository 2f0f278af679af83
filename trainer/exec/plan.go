package exec

import (
	"fmt"
	"reflect"
	"strings"

	gg "gonum.org/v1/gonum/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Graph is what the executor needs to know about a gorgonia graph.
type Graph struct {
	G       *G.ExprGraph
	Inputs  []*G.Node // uploaded before every run (the batch)
	Params  []*G.Node // resident on the backend
	Grads   []*G.Node // the gradient node of each parameter (nil for an evaluation graph)
	Outputs []*G.Node // read back after a run (loss, logits)
}

// ConvOp is implemented by a fused convolution op (the model's own):
// inputs x, w and optionally b (shaped 1×O×1×1).
type ConvOp interface {
	ConvGeometry() (n, c, h, w, o, k, pad int)
}

// ConvGradOp is implemented by a convolution's gradient ops: inputs x, w,
// dy; Which is 0 for the image, 1 the filters, 2 the bias.
type ConvGradOp interface {
	ConvForward() ConvOp
	ConvGradWhich() int
}

// ConvStrider is implemented by a convolution op whose stride is not 1.
type ConvStrider interface {
	ConvStride() int
}

// UnaryKernelOp is implemented by an element-wise op of one input that
// the Unary kernel computes (the model's SiLU).
type UnaryKernelOp interface {
	UnaryKernel() UnOp
}

// BinaryKernelOp is implemented by an element-wise op of two inputs of
// the same size that the Binary kernel computes (SiLU's gradient).
type BinaryKernelOp interface {
	BinaryKernel() BinOp
}

// DetLossOp is implemented by a detection loss op: inputs the head and
// the targets (see Det), output the three summed terms (box, class,
// objectness).
type DetLossOp interface {
	DetGeometry() Det
}

// DetLossGradOp is a detection loss's gradient: inputs the head, the
// targets and the gradient of the three terms; output the head's.
type DetLossGradOp interface {
	DetLossForward() DetLossOp
}

// NormOp is implemented by a batch-norm op (the model's own): input x
// (N×C×…), output the normalised x. NormRunning is the running mean then
// variance (2·C values), updated in place on the host.
type NormOp interface {
	NormParams() (momentum, eps float32, training bool)
	NormRunning() []float32
}

// NormGradOp is a batch-norm's gradient: inputs x, dy.
type NormGradOp interface {
	NormForward() NormOp
}

// Options share buffers between programs on one backend: an evaluation
// graph reads the training graph's parameters and batch-norm statistics.
type Options struct {
	Params    []Buf // one per Graph.Params; allocated (in one block) and uploaded when nil
	BNRunning []Buf // one per batch-norm op in graph order
	// Extra floats are kept after the inputs in the input block
	// (Program.Extra): the optimiser's scalars travel with the batch.
	Extra int
	// reuse is a program on the same backend that never runs at the same
	// time as this one: this one takes its free buffers before
	// allocating (see leaveSpare).
	reuse *Program
}

// Program is a planned graph on a backend.
type Program struct {
	be        Backend
	steps     []func()
	Names     []string // one per step, for events and tests
	Fallbacks []string // ops run through gorgonia on the CPU, with copies
	Fused     []string // what the planner fused, one line per kernel
	Kept      []string // convolutions whose columns wait for their filter gradient
	inputs    []Buf    // views of InBlock
	inSize    []int
	InOff     []int // each input's offset in InBlock
	InBlock   Buf   // the inputs one after another, then Extra
	InTotal   int   // floats of InBlock
	Extra     Buf   // Options.Extra floats of InBlock (NoBuf when none)
	ExtraOff  int
	outputs   []Buf
	outSize   []int
	Params    []Buf // views of ParamBlock (or Options.Params)
	ParamSize []int
	ParamOff  []int // offsets in ParamBlock and GradBlock
	// ParamBlock holds every parameter (NoBuf when Options.Params were
	// given), GradBlock every gradient at the same offsets, so that one
	// optimiser kernel updates them all; ParamTotal floats each.
	ParamBlock, GradBlock Buf
	ParamTotal            int
	Grads                 []Buf // views of GradBlock
	BNOps                 []NormOp
	BNRunning             []Buf
	spare                 []spareBuf // buffers free between runs (leaveSpare)
	err                   error
}

// align rounds n floats up to 64 (256 bytes): every view of a block
// starts aligned, as cuBLAS and vector loads prefer.
func align(n int) int { return (n + 63) &^ 63 }

type planner struct {
	be       Backend
	g        Graph
	buf      map[int64]Buf
	store    map[int64]int64 // node → the node whose buffer it aliases
	scalar   map[int64]bool
	pinned   map[int64]bool
	released map[int64]bool
	free     map[int][]Buf
	last     map[int64]int
	pos      map[int64]int // a live node's index in plan order
	users    map[int64]int // its live consumers (an output or gradient counts as one)
	skip     map[int64]bool
	fused    map[int64]*fusion // run this fusion at the node's position
	gradView map[int64]Buf     // a gradient's root → its view in GradBlock
	konst    map[int64]G.Value // nodes whose value is known when planning
	prog     *Program
	bnIndex  int
	bnSave   map[NormOp]Buf
	// The convolutions' scratch, shared by all of them (see conv): the
	// columns of one part of the batch (also its image gradient's
	// columns), the forward product of one part, and one part's output
	// gradient permuted (O × n·P).
	cols, tmpA, tmpT Buf
	budget           int // floats of columns one part may unfold (Backend's ConvScratch)
	live             []*G.Node
	spare            []spareBuf // another program's free buffers, to take before allocating
	scratchBufs      []spareBuf
	keep             map[ConvOp]bool  // convolutions that keep their columns for the filter gradient
	kept             map[ConvOp][]Buf // and those columns, a view per part
	// convolution outputs (and their gradients) left as the GEMM writes
	// them, in parts of this many images, each part C × its images·P
	// (Norm.Part): a fused batch norm reads them so, and the
	// convolution's gradient takes them so, with no permutation.
	parted  map[int64]int
	poolIdx map[int64]Buf // a max-pool node's winners, kept for its gradient
	opts    Options
	err     error
}

func size(s tensor.Shape) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func children(g *G.ExprGraph, n *G.Node) []*G.Node {
	var out []*G.Node
	for _, c := range gg.NodesOf(g.From(n.ID())) {
		out = append(out, c.(*G.Node))
	}
	return out
}

// Compile plans g on be.
func Compile(be Backend, g Graph, opts Options) (*Program, error) {
	sorted, err := G.Sort(g.G)
	if err != nil {
		return nil, fmt.Errorf("%w: sorting the graph: %w", ErrExec, err)
	}
	order := make([]*G.Node, 0, len(sorted))
	for i := len(sorted) - 1; i >= 0; i-- {
		order = append(order, sorted[i])
	}
	// Keep only what the outputs and gradients need.
	need := map[int64]bool{}
	var mark func(n *G.Node)
	mark = func(n *G.Node) {
		if need[n.ID()] {
			return
		}
		need[n.ID()] = true
		for _, c := range children(g.G, n) {
			mark(c)
		}
	}
	for _, n := range append(append([]*G.Node{}, g.Outputs...), g.Grads...) {
		if n == nil {
			return nil, fmt.Errorf("%w: a graph output is missing", ErrExec)
		}
		mark(n)
	}
	p := &planner{be: be, g: g, buf: map[int64]Buf{}, store: map[int64]int64{}, scalar: map[int64]bool{},
		pinned: map[int64]bool{}, released: map[int64]bool{}, free: map[int][]Buf{}, last: map[int64]int{},
		pos: map[int64]int{}, users: map[int64]int{}, skip: map[int64]bool{}, fused: map[int64]*fusion{},
		gradView: map[int64]Buf{}, konst: map[int64]G.Value{}, opts: opts, bnSave: map[NormOp]Buf{},
		poolIdx: map[int64]Buf{}, budget: convScratch(be), keep: map[ConvOp]bool{}, kept: map[ConvOp][]Buf{}, parted: map[int64]int{},
		prog: &Program{be: be, Extra: NoBuf, ParamBlock: NoBuf, GradBlock: NoBuf, InBlock: NoBuf}, cols: NoBuf, tmpA: NoBuf, tmpT: NoBuf}
	if opts.reuse != nil {
		p.spare = append(p.spare, opts.reuse.spare...)
	}
	var live []*G.Node
	for _, n := range order {
		if need[n.ID()] {
			if n.Dtype() != tensor.Float32 {
				return nil, fmt.Errorf("%w: node %s is %v; only float32 graphs run on the executor", ErrExec, n.Name(), n.Dtype())
			}
			p.pos[n.ID()] = len(live)
			live = append(live, n)
		}
	}
	p.live = live
	p.bind(live)
	if p.err != nil {
		return nil, p.err
	}
	p.fold(live)
	p.gradBlock()
	p.fuse(live)
	p.scratch(live)
	for i, n := range live {
		if p.err != nil {
			return nil, p.err
		}
		if f, ok := p.fused[n.ID()]; ok {
			p.planFusion(i, n, f)
			continue
		}
		if p.skip[n.ID()] {
			p.release(i, n)
			continue
		}
		if _, bound := p.buf[n.ID()]; n.Op() == nil || bound {
			continue // a leaf, a constant or a size, placed by bind
		}
		p.plan(i, n)
	}
	if p.err != nil {
		return nil, p.err
	}
	p.gradCopies()
	for _, n := range g.Outputs {
		p.prog.outputs = append(p.prog.outputs, p.bufOf(n))
		p.prog.outSize = append(p.prog.outSize, size(n.Shape()))
	}
	p.leaveSpare()
	if p.err == nil {
		p.err = be.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.prog, nil
}

func (p *planner) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: "+format, append([]any{ErrExec}, args...)...)
	}
}

// alloc allocates n floats; after a failure it allocates nothing more.
func (p *planner) alloc(n int) Buf {
	if p.err != nil {
		return NoBuf
	}
	b, err := p.be.Alloc(max(n, 1))
	if err != nil {
		p.err = fmt.Errorf("%w: allocating %d floats: %w", ErrExec, n, err)
		return NoBuf
	}
	return b
}

func (p *planner) view(parent Buf, off, n int) Buf {
	if p.err != nil {
		return NoBuf
	}
	b, err := p.be.View(parent, off, n)
	if err != nil {
		p.err = fmt.Errorf("%w: %w", ErrExec, err)
		return NoBuf
	}
	return b
}

func (p *planner) root(n *G.Node) int64 {
	id := n.ID()
	for {
		r, ok := p.store[id]
		if !ok || r == id {
			return id
		}
		id = r
	}
}

func (p *planner) bufOf(n *G.Node) Buf { return p.buf[p.root(n)] }

// block lays sizes out one after another at aligned offsets and returns
// the offsets and the total.
func block(sizes []int) (off []int, total int) {
	for _, n := range sizes {
		off = append(off, total)
		total += align(max(n, 1))
	}
	return off, total
}

// bind places the leaves (inputs, parameters, constants), marks aliases and
// computes each buffer's last use and each node's users.
func (p *planner) bind(live []*G.Node) {
	isParam := map[int64]int{}
	for i, n := range p.g.Params {
		isParam[n.ID()] = i
	}
	isInput := map[int64]bool{}
	for _, n := range p.g.Inputs {
		isInput[n.ID()] = true
	}
	pr := p.prog
	for _, n := range p.g.Params {
		pr.ParamSize = append(pr.ParamSize, size(n.Shape()))
	}
	pr.ParamOff, pr.ParamTotal = block(pr.ParamSize)
	if p.opts.Params == nil && len(p.g.Params) > 0 {
		pr.ParamBlock = p.alloc(pr.ParamTotal)
	}
	for i, n := range p.g.Params {
		var b Buf
		if p.opts.Params != nil {
			b = p.opts.Params[i]
		} else {
			b = p.view(pr.ParamBlock, pr.ParamOff[i], pr.ParamSize[i])
			if v := n.Value(); v != nil && p.err == nil {
				p.be.Upload(b, v.Data().([]float32))
			}
		}
		p.buf[n.ID()] = b
		p.pinned[n.ID()] = true
		pr.Params = append(pr.Params, b)
	}
	for _, n := range p.g.Inputs { // even one no output reads: Run uploads it
		pr.inSize = append(pr.inSize, size(n.Shape()))
	}
	pr.InOff, pr.InTotal = block(pr.inSize)
	pr.ExtraOff = pr.InTotal
	pr.InTotal += p.opts.Extra
	if pr.InTotal > 0 {
		pr.InBlock = p.alloc(pr.InTotal)
	}
	for i, n := range p.g.Inputs {
		b := p.view(pr.InBlock, pr.InOff[i], pr.inSize[i])
		pr.inputs = append(pr.inputs, b)
		p.buf[n.ID()] = b
		p.pinned[n.ID()] = true
	}
	if p.opts.Extra > 0 {
		pr.Extra = p.view(pr.InBlock, pr.ExtraOff, p.opts.Extra)
	}
	for i, n := range live {
		id := n.ID()
		if len(n.Shape()) == 0 {
			p.scalar[id] = true
		}
		switch {
		case isInput[id]:
		case n.Op() == nil || n.Op().Arity() == 0:
			if _, ok := isParam[id]; ok {
				break
			}
			v := n.Value()
			if v == nil {
				p.fail("leaf %s has no value and is neither an input nor a parameter", n.Name())
				return
			}
			var data []float32
			switch d := v.Data().(type) {
			case float32:
				data = []float32{d}
			case []float32:
				data = d
			default:
				p.fail("constant %s is %T, not float32", n.Name(), d)
				return
			}
			b := p.alloc(len(data))
			if p.err == nil {
				p.be.Upload(b, data)
			}
			p.buf[id], p.pinned[id] = b, true
			p.konst[id] = v
		default:
			kind := fmt.Sprintf("%T", n.Op())
			switch kind {
			case "gorgonia.reshapeOp":
				p.store[id] = children(p.g.G, n)[0].ID()
			case "gorgonia.sizeOp":
				v := num(field(n.Op(), "val"))
				b := p.alloc(1)
				if p.err == nil {
					p.be.Upload(b, []float32{float32(v)})
				}
				p.buf[id], p.pinned[id] = b, true
				p.konst[id] = G.NewF32(float32(v))
			}
		}
		if kindOf(n) == "gorgonia.sizeOp" {
			continue // its value is known now: it reads nothing at run time
		}
		ins := children(p.g.G, n)
		// A max-pool's gradient reads only the output gradient (and the
		// winners its forward pool kept): its input and output need not
		// live until then.
		byIdx := kindOf(n) == "*gorgonia.maxPoolDiffOp" && len(ins) == 3
		if byIdx {
			_, byIdx = poolOf(n.Op(), ins[0].Shape(), ins[1].Shape())
		}
		for j, c := range ins {
			if !byIdx || j == 2 {
				p.last[p.root(c)] = i
			}
			p.users[c.ID()]++
		}
	}
	for _, n := range append(append([]*G.Node{}, p.g.Outputs...), p.g.Grads...) {
		p.pinned[p.root(n)] = true
		p.users[n.ID()]++
	}
}

// fold computes, when planning, every op node whose inputs are all known
// (constants, sizes, and nodes folded before): gorgonia computes it on the
// CPU once and it becomes a constant buffer, so no kernel runs for it each
// step (the loss's gradient seed −1/N broadcast to the batch: four
// launches).
func (p *planner) fold(live []*G.Node) {
	for _, n := range live {
		if n.Op() == nil || n.Op().Arity() == 0 || p.konst[n.ID()] != nil || p.err != nil {
			continue
		}
		ins := children(p.g.G, n)
		vals := make([]G.Value, len(ins))
		known := len(ins) > 0
		for j, c := range ins {
			v := p.konst[c.ID()]
			if v == nil {
				known = false
				break
			}
			if t, ok := v.(tensor.Tensor); ok {
				v = t.Clone().(tensor.Tensor) // an op may write into its input
			}
			vals[j] = v
		}
		if !known {
			continue
		}
		v, err := n.Op().Do(vals...)
		if err != nil || v == nil {
			continue // left to run as a step
		}
		var data []float32
		switch d := v.Data().(type) {
		case float32:
			data = []float32{d}
		case []float32:
			data = d
		default:
			continue
		}
		if len(data) != max(size(n.Shape()), 1) {
			continue
		}
		p.konst[n.ID()] = v
		if _, aliased := p.store[n.ID()]; aliased {
			continue // a reshape: it shares its input's buffer
		}
		b := p.alloc(len(data))
		if p.err == nil {
			p.be.Upload(b, data)
		}
		p.buf[n.ID()], p.pinned[n.ID()] = b, true
	}
}

// gradBlock allocates the gradients' block and, for each gradient computed
// by an op of its own, the view its op writes into.
func (p *planner) gradBlock() {
	pr := p.prog
	if len(p.g.Grads) == 0 || len(p.g.Grads) != len(p.g.Params) || p.err != nil {
		return
	}
	pr.GradBlock = p.alloc(pr.ParamTotal)
	seen := map[int64]bool{}
	for i, n := range p.g.Grads {
		v := p.view(pr.GradBlock, pr.ParamOff[i], pr.ParamSize[i])
		pr.Grads = append(pr.Grads, v)
		r := p.root(n)
		_, bound := p.buf[r]
		if op := p.nodeOf(r); !bound && !seen[r] && op != nil && size(op.Shape()) == pr.ParamSize[i] {
			p.gradView[r] = v
		}
		seen[r] = true
	}
}

// nodeOf finds a live node by id (nil when it is not live).
func (p *planner) nodeOf(id int64) *G.Node {
	n, ok := p.g.G.Node(id).(*G.Node)
	if !ok || n == nil || n.Op() == nil {
		return nil
	}
	if _, live := p.pos[id]; !live {
		return nil
	}
	return n
}

// gradCopies copies the gradients that could not be computed in place
// (a gradient that is a parameter, a constant or another's) into their
// views.
func (p *planner) gradCopies() {
	for i, n := range p.g.Grads {
		src, dst := p.bufOf(n), p.prog.Grads[i]
		if src == dst || p.err != nil {
			continue
		}
		sz := p.prog.ParamSize[i]
		be := p.be
		p.add("copy gradient "+p.g.Params[i].Name(), func() { be.Repeat(src, dst, 1, 1, sz) })
	}
}

// field reads a (possibly unexported) field of an op struct.
func field(op any, name string) reflect.Value {
	v := reflect.ValueOf(op)
	for v.Kind() == reflect.Ptr || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	return v.FieldByName(name)
}

// num reads an integer field as an int (0 when absent).
func num(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(v.Uint())
	}
	return 0
}

func intsOf(v reflect.Value) []int {
	out := make([]int, v.Len())
	for i := range out {
		out[i] = int(v.Index(i).Int())
	}
	return out
}

// out allocates the buffer of an op node's result, reusing a free one; a
// gradient gets its view of the gradient block.
func (p *planner) out(n *G.Node) Buf {
	if v, ok := p.gradView[n.ID()]; ok {
		p.buf[n.ID()] = v
		return v
	}
	sz := max(size(n.Shape()), 1)
	if l := p.free[sz]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[sz] = l[:len(l)-1]
		p.buf[n.ID()] = b
		return b
	}
	b := p.take(sz)
	p.buf[n.ID()] = b
	return b
}

// release returns the buffers whose last use is step i.
func (p *planner) release(i int, n *G.Node) {
	for _, c := range children(p.g.G, n) {
		r := p.root(c)
		if p.last[r] != i || p.pinned[r] || p.released[r] {
			continue // still needed, kept for the whole run, or already free (x ⊙ x)
		}
		if b, ok := p.buf[r]; ok && b != NoBuf {
			sz := max(size(c.Shape()), 1)
			p.free[sz] = append(p.free[sz], b)
			p.released[r] = true
		}
	}
}

func (p *planner) add(name string, f func()) {
	p.prog.steps = append(p.prog.steps, f)
	p.prog.Names = append(p.prog.Names, name)
}

func kindOf(n *G.Node) string {
	if n.Op() == nil {
		return ""
	}
	return fmt.Sprintf("%T", n.Op())
}

// binOf returns the operator of an element-wise binary op node.
func binOf(n *G.Node) (BinOp, bool) {
	if kindOf(n) != "gorgonia.elemBinOp" {
		return 0, false
	}
	tok := strings.Fields(n.Op().String())
	op, ok := map[string]BinOp{"+": OpAdd, "-": OpSub, "⊙": OpMul, "÷": OpDiv, ">=": OpGE, ">": OpGT, "<=": OpLE, "<": OpLT}[tok[0]]
	if op >= OpGE && (len(tok) < 2 || tok[1] != "true") {
		return 0, false // a comparison returning booleans
	}
	return op, ok
}

// sumAxes returns the axes a sum op node reduces.
func sumAxes(n *G.Node) ([]int, bool) {
	if kindOf(n) != "gorgonia.sumOp" {
		return nil, false
	}
	return intsOf(field(n.Op(), "along")), true
}

// plan adds the step for op node n (the i-th live node).
func (p *planner) plan(i int, n *G.Node) {
	op := n.Op()
	kind := kindOf(n)
	ins := children(p.g.G, n)
	if kind == "gorgonia.reshapeOp" {
		return
	}
	var in []Buf
	for _, c := range ins {
		in = append(in, p.bufOf(c))
	}
	osz := size(n.Shape())
	be := p.be
	switch kind {
	case "gorgonia.elemBinOp":
		bop, ok := binOf(n)
		as, bs := p.scalar[ins[0].ID()], p.scalar[ins[1].ID()]
		sameSize := (as || size(ins[0].Shape()) == osz) && (bs || size(ins[1].Shape()) == osz)
		if ok && sameSize {
			out := p.out(n)
			a, b := in[0], in[1]
			p.add(op.String(), func() { be.Binary(bop, a, b, out, osz, as, bs) })
			p.release(i, n)
			return
		}
	case "gorgonia.elemUnaryOp":
		uop, ok := map[string]UnOp{"neg": OpNeg, "exp": OpExp, "ln": OpLog, "sqrt": OpSqrt, "square": OpSquare, "abs": OpAbs}[op.String()]
		if ok {
			out := p.out(n)
			a := in[0]
			p.add(op.String(), func() { be.Unary(uop, a, out, osz) })
			p.release(i, n)
			return
		}
	case "gorgonia.linAlgBinOp":
		a, b := ins[0].Shape(), ins[1].Shape()
		if num(field(op, "āBinaryOperator")) == 0 && len(a) == 2 && len(b) == 2 {
			ta, tb := field(op, "transA").Bool(), field(op, "transB").Bool()
			m, k := a[0], a[1]
			if ta {
				m, k = k, m
			}
			nn := b[1]
			if tb {
				nn = b[0]
			}
			out := p.out(n)
			A, B := in[0], in[1]
			p.add(op.String(), func() { be.Gemm(ta, tb, m, nn, k, A, B, out, 0) })
			p.release(i, n)
			return
		}
	case "*gorgonia.repeatOp":
		along := num(field(op, "along"))
		s := ins[0].Shape()
		if p.scalar[ins[0].ID()] {
			s = tensor.Shape{1}
		}
		os := n.Shape()
		if along < len(s) && s[along] == 1 && len(os) == len(s) {
			outer, inner := size(s[:along]), size(s[along+1:])
			rep := os[along]
			out := p.out(n)
			a := in[0]
			p.add(op.String(), func() { be.Repeat(a, out, outer, rep, inner) })
			p.release(i, n)
			return
		}
	case "gorgonia.sumOp":
		along, _ := sumAxes(n)
		if p.sum(i, n, n, ins[0], along, op.String()) {
			return
		}
	case "*gorgonia.softmaxOp":
		s := n.Shape()
		axis := num(field(op, "axis"))
		if len(s) == 2 && (axis == -1 || axis == 1) {
			log := field(op, "isLog").Bool()
			out := p.out(n)
			a := in[0]
			p.add(op.String(), func() { be.Softmax(a, out, s[0], s[1], log) })
			p.release(i, n)
			return
		}
	case "*gorgonia.softmaxDiffOp":
		s := n.Shape()
		sm := field(op, "softmaxOp")
		axis := num(sm.Elem().FieldByName("axis"))
		if len(s) == 2 && (axis == -1 || axis == 1) {
			log := sm.Elem().FieldByName("isLog").Bool()
			out := p.out(n)
			y, g := in[1], in[2]
			p.add(op.String(), func() { be.SoftmaxGrad(y, g, out, s[0], s[1], log) })
			p.release(i, n)
			return
		}
	case "*gorgonia.maxPoolOp":
		if pool, ok := poolOf(op, ins[0].Shape(), n.Shape()); ok {
			out := p.out(n)
			idx := p.take(osz)
			p.poolIdx[n.ID()] = idx
			a := in[0]
			p.add(op.String(), func() { be.MaxPool(a, out, idx, pool) })
			p.release(i, n)
			return
		}
	case "*gorgonia.maxPoolDiffOp":
		if p.poolGrad(i, n, n, nil) {
			return
		}
	}
	if bn, ok := op.(NormOp); ok && len(ins) == 1 && len(ins[0].Shape()) >= 2 {
		p.norm(i, n, bn, ins[0].Shape(), in[0])
		return
	}
	if bg, ok := op.(NormGradOp); ok && len(ins) == 2 && len(ins[0].Shape()) >= 2 {
		if save, ok := p.bnSave[bg.NormForward()]; ok {
			s := ins[0].Shape()
			nm := Norm{N: s[0], C: s[1], HW: size(s[2:])}
			out := p.out(n)
			x, g := in[0], in[1]
			p.add(op.String(), func() { be.BatchNormGrad(x, g, out, save, nm) })
			p.release(i, n)
			return
		}
	}
	if p.kernelOp(i, n, op, ins, in) {
		return
	}
	if c, ok := op.(ConvOp); ok {
		p.conv(i, n, c, in, n, Plain())
		return
	}
	if c, ok := op.(ConvGradOp); ok {
		p.convGrad(i, n, c, in)
		return
	}
	p.fallback(i, n, ins, in)
}

// sumShape says how a sum of a tensor shaped s along axes runs as one
// kernel: keep false is Sum(outer, mid, inner) (the axes are one
// contiguous run), keep true SumKeep(outer, mid, inner) (the axes kept
// are).
func sumShape(s tensor.Shape, along []int) (outer, mid, inner int, keep, ok bool) {
	if len(along) == 0 || len(s) == 0 {
		return 0, 0, 0, false, false
	}
	red := make([]bool, len(s))
	for _, a := range along {
		if a < 0 || a >= len(s) || red[a] {
			return 0, 0, 0, false, false
		}
		red[a] = true
	}
	run := func(want bool) (int, int, bool) { // the one run of axes with red == want
		l, h := -1, -1
		for d := range s {
			switch {
			case red[d] == want && l < 0:
				l = d
			case red[d] == want && h >= 0:
				return 0, 0, false
			case red[d] != want && l >= 0 && h < 0:
				h = d
			}
		}
		if h < 0 {
			h = len(s)
		}
		return l, h, l >= 0
	}
	if l, h, ok := run(true); ok {
		return size(s[:l]), size(s[l:h]), size(s[h:]), false, true
	}
	if l, h, ok := run(false); ok {
		return size(s[:l]), size(s[l:h]), size(s[h:]), true, true
	}
	return 0, 0, 0, false, false
}

// sum plans out = x summed along axes (of x's shape) as one kernel, at
// the position of node at (released there).
func (p *planner) sum(i int, at, out, x *G.Node, along []int, name string) bool {
	if p.scalar[x.ID()] {
		return false
	}
	outer, mid, inner, keep, ok := sumShape(x.Shape(), along)
	if !ok {
		return false
	}
	a := p.bufOf(x)
	o := p.out(out)
	be := p.be
	if keep {
		p.add(name, func() { be.SumKeep(a, o, outer, mid, inner) })
	} else {
		p.add(name, func() { be.Sum(a, o, outer, mid, inner) })
	}
	p.release(i, at)
	return true
}

// poolGrad plans a max-pool gradient node d, written to out (d itself, or
// the product with a ReLU mask fused into it).
func (p *planner) poolGrad(i int, d, out *G.Node, mask *G.Node) bool {
	ins := children(p.g.G, d)
	fwd := ins[1]
	idx, ok := p.poolIdx[fwd.ID()]
	pool, pok := poolOf(d.Op(), ins[0].Shape(), fwd.Shape())
	if !ok || !pok {
		return false
	}
	m := NoBuf
	if mask != nil {
		m = p.bufOf(mask)
	}
	o := p.out(out)
	g := p.bufOf(ins[2])
	be := p.be
	p.add(d.Op().String(), func() { be.MaxPoolGrad(g, idx, m, o, pool) })
	p.release(i, d)
	return true
}

// norm plans a batch-norm op: its running statistics are shared with
// another program (Options.BNRunning) or uploaded from the op.
func (p *planner) norm(i int, n *G.Node, bn NormOp, s tensor.Shape, x Buf) {
	nm, running, save, training := p.normBufs(bn, s)
	out := p.out(n)
	be := p.be
	p.add(n.Op().String(), func() { be.BatchNorm(x, out, save, running, nm, training) })
	p.release(i, n)
}

// normBufs places a batch norm's running statistics (shared with another
// program through Options.BNRunning, or uploaded from the op) and the
// buffer its gradient reads the batch's statistics from.
func (p *planner) normBufs(bn NormOp, s tensor.Shape) (nm Norm, running, save Buf, training bool) {
	momentum, eps, training := bn.NormParams()
	nm = Norm{N: s[0], C: s[1], HW: size(s[2:]), Momentum: momentum, Epsilon: eps}
	if p.opts.BNRunning != nil {
		if p.bnIndex >= len(p.opts.BNRunning) {
			p.fail("more batch-norm ops than shared statistics")
			return nm, NoBuf, NoBuf, training
		}
		running = p.opts.BNRunning[p.bnIndex]
	} else {
		running = p.alloc(2 * nm.C)
		if r := bn.NormRunning(); len(r) == 2*nm.C && p.err == nil {
			p.be.Upload(running, r)
		}
	}
	p.bnIndex++
	save = p.alloc(2 * nm.C)
	p.bnSave[bn] = save
	p.prog.BNOps = append(p.prog.BNOps, bn)
	p.prog.BNRunning = append(p.prog.BNRunning, running)
	return nm, running, save, training
}

func poolOf(op G.Op, in, out tensor.Shape) (Pool, bool) {
	v := field(op, "maxPoolOp")
	if !v.IsValid() {
		v = reflect.Indirect(reflect.ValueOf(op))
	}
	get := func(name string) int { return num(v.FieldByName(name)) }
	if len(in) != 4 || len(out) != 4 || v.FieldByName("explicitPadding").Bool() ||
		get("padNorth") != 0 || get("padWest") != 0 || get("padSouth") != 0 || get("padEast") != 0 {
		return Pool{}, false
	}
	return Pool{N: in[0], C: in[1], H: in[2], W: in[3], OH: out[2], OW: out[3],
		KH: get("h"), KW: get("w"), SH: get("strideH"), SW: get("strideW")}, true
}

func convOf(c ConvOp) Conv {
	n, ch, h, w, o, k, pad := c.ConvGeometry()
	s := 1
	if st, ok := c.(ConvStrider); ok {
		s = max(st.ConvStride(), 1)
	}
	return Conv{N: n, C: ch, H: h, W: w, O: o, K: k, Pad: pad, OH: (h+2*pad-k)/s + 1, OW: (w+2*pad-k)/s + 1, Stride: s}
}

// kernelOp plans the ops that say which kernel computes them (element-wise
// ones, the detection loss and its gradient); false for any other op.
func (p *planner) kernelOp(i int, n *G.Node, op G.Op, ins []*G.Node, in []Buf) bool {
	be, osz := p.be, size(n.Shape())
	same := func(k int) bool { return len(ins) == k && size(ins[0].Shape()) == osz && size(ins[k-1].Shape()) == osz }
	switch o := op.(type) {
	case UnaryKernelOp:
		if !same(1) {
			return false
		}
		u, a, out := o.UnaryKernel(), in[0], p.out(n)
		p.add(op.String(), func() { be.Unary(u, a, out, osz) })
	case BinaryKernelOp:
		if !same(2) {
			return false
		}
		b, x, y, out := o.BinaryKernel(), in[0], in[1], p.out(n)
		p.add(op.String(), func() { be.Binary(b, x, y, out, osz, false, false) })
	case DetLossOp:
		d := o.DetGeometry()
		if len(ins) != 2 || size(ins[0].Shape()) != d.Cells()*d.Channels() || size(ins[1].Shape()) != d.Cells()*DetTargetFloats || osz != 3 {
			return false
		}
		terms := p.alloc(3 * d.Cells())
		head, tgt, out := in[0], in[1], p.out(n)
		p.add(op.String(), func() {
			be.DetLoss(head, tgt, terms, d)
			be.Sum(terms, out, 1, d.Cells(), 3)
		})
	case DetLossGradOp:
		d := o.DetLossForward().DetGeometry()
		if len(ins) != 3 || size(ins[2].Shape()) != 3 || osz != d.Cells()*d.Channels() {
			return false
		}
		head, tgt, g, out := in[0], in[1], in[2], p.out(n)
		p.add(op.String(), func() { be.DetLossGrad(head, tgt, g, out, d) })
	default:
		return false
	}
	p.release(i, n)
	return true
}

// partImages is how many images of g one part of the batch holds: as
// many as unfold into budget floats (the columns, KDim·P per image, and
// the forward product, O·P), at least one, spread evenly over the parts.
func partImages(g Conv, budget int) int {
	most := max(1, budget/max(max(g.KDim(), g.O)*g.PDim(), 1))
	parts := (g.N + most - 1) / most
	return (g.N + parts - 1) / parts
}

// convPart is one part of a convolution's batch: its geometry (N its
// images) and views of the buffers it reads and writes.
type convPart struct {
	g    Conv
	img  Buf      // the input images
	dimg Buf      // their gradient (NoBuf: none)
	out  Buf      // the output (forward) or the output gradient
	t    Buf      // the output gradient permuted, O × n·P: tmpT, or out itself for one image
	swap bool     // t is tmpT: permute into it first
	ep   Epilogue // forward: ep with the part's view of the mask
	beta float32  // filter gradient: 0 for the first part, then 1 (the parts add up)
}

// parts cuts a convolution's batch into parts: img, dimg and out are the
// whole batch's buffers (dimg NoBuf when unused); ep (forward) is the
// epilogue, whose mask is cut with out.
func (p *planner) parts(g Conv, img, dimg, out Buf, ep Epilogue) []convPart {
	b := partImages(g, p.budget)
	isz, osz := g.C*g.H*g.W, g.O*g.PDim()
	cut := func(whole Buf, n0, n, sz int) Buf {
		if whole == NoBuf || n == g.N { // one part uses the buffers
			return whole
		}
		return p.view(whole, n0*sz, n*sz)
	}
	var ps []convPart
	for n0 := 0; n0 < g.N; n0 += b {
		pg := g
		pg.N = min(b, g.N-n0)
		pt := convPart{g: pg, img: cut(img, n0, pg.N, isz), dimg: cut(dimg, n0, pg.N, isz), out: cut(out, n0, pg.N, osz),
			t: p.tmpT, swap: true, ep: ep, beta: 1}
		pt.ep.Mask = cut(ep.Mask, n0, pg.N, osz)
		if pg.N == 1 { // one image's output gradient is O × P already
			pt.t, pt.swap = pt.out, false
		}
		if n0 == 0 {
			pt.beta = 0
		}
		ps = append(ps, pt)
	}
	return ps
}

// scratch sizes and allocates the convolutions' scratch before the steps
// are planned (their parts take views of it): the columns and the forward
// product of the largest part, and the permuted output gradient of the
// largest batch. A convolution runs part by part (see conv), so the
// columns never hold the whole batch: at 48×48 a 32-channel layer's
// columns are 2.6 MB an image, 170 MB for a batch of 64. A convolution
// whose batch is one part keeps its columns (at most the budget) for its
// filter gradient, which then need not unfold the images again; so do
// strided convolutions, whose unfolding gathers every other float, within
// what a ColumnKeeper backend allows, a view per part.
func (p *planner) scratch(live []*G.Node) {
	var cols, a, t int
	strided := 0 // floats of strided convolutions' columns the backend keeps
	if k, ok := p.be.(ColumnKeeper); ok {
		strided = k.StridedColumns()
	}
	for _, n := range live {
		if op, ok := n.Op().(ConvGradOp); ok && !p.skip[n.ID()] && op.ConvGradWhich() == 1 {
			g := convOf(op.ConvForward())
			switch sz := g.KDim() * g.N * g.PDim(); {
			case partImages(g, p.budget) == g.N:
				p.keep[op.ConvForward()] = true
			case g.S() > 1 && sz <= strided:
				p.keep[op.ConvForward()] = true
				strided -= sz
			}
		}
	}
	for _, n := range live {
		if p.skip[n.ID()] || n.Op() == nil {
			continue
		}
		switch op := n.Op().(type) {
		case ConvOp:
			g := convOf(op)
			b := partImages(g, p.budget)
			cols, a = max(cols, g.KDim()*b*g.PDim()), max(a, g.O*b*g.PDim())
		case ConvGradOp:
			g := convOf(op.ConvForward())
			if op.ConvGradWhich() == 2 {
				continue
			}
			b := partImages(g, p.budget)
			cols = max(cols, g.KDim()*b*g.PDim())
			if b > 1 {
				t = max(t, g.O*b*g.PDim())
			}
		}
	}
	for _, s := range []struct {
		b *Buf
		n int
	}{{&p.cols, cols}, {&p.tmpA, a}, {&p.tmpT, t}} {
		if s.n > 0 {
			*s.b = p.take(s.n)
			p.scratchBufs = append(p.scratchBufs, spareBuf{*s.b, s.n})
		}
	}
}

// conv runs a convolution part by part (partImages): the part's columns,
// one GEMM, then the permutation to NCHW with the bias and ep's ReLU,
// written to out (n itself, or the ReLU fused after it). The columns are
// not kept: the filter gradient unfolds the images again.
func (p *planner) conv(i int, n *G.Node, c ConvOp, in []Buf, out *G.Node, ep Epilogue) {
	g := convOf(c)
	o := p.out(out)
	x, w := in[0], in[1]
	ep.Inner, ep.C = g.PDim(), g.O
	if len(in) == 3 {
		ep.Bias = in[2]
	}
	ps := p.parts(g, x, NoBuf, o, ep)
	be, tmpA, P := p.be, p.tmpA, g.PDim()
	cols := make([]Buf, len(ps)) // each part's columns
	for k := range cols {
		cols[k] = p.cols
	}
	if p.keep[c] {
		all := p.alloc(g.KDim() * g.N * P)
		p.prog.Kept = append(p.prog.Kept, n.Op().String())
		for k, n0 := 0, 0; k < len(ps); k++ {
			cols[k] = p.view(all, g.KDim()*n0*P, g.KDim()*ps[k].g.N*P)
			n0 += ps[k].g.N
		}
		p.kept[c] = cols
	}
	parted := p.parted[out.ID()] > 0
	p.add(fmt.Sprintf("%v", n.Op()), func() {
		for k := range ps {
			pt := &ps[k]
			be.Im2col(pt.img, cols[k], pt.g)
			if parted { // the product is the part's output
				be.Gemm(false, false, g.O, pt.g.N*P, g.KDim(), w, cols[k], pt.out, 0)
				continue
			}
			be.Gemm(false, false, g.O, pt.g.N*P, g.KDim(), w, cols[k], tmpA, 0)
			be.Swap01(tmpA, pt.out, g.O, pt.g.N, P, pt.ep)
		}
	})
	p.release(i, n)
}

// convGrad plans a convolution's gradients, part by part. The image and
// filter gradients read the output gradient permuted to O × n·P per part;
// when the convolution's other gradient is the next node (gorgonia orders
// a convolution's gradients together), both run in one step and share the
// permutation. The filter gradient unfolds each part's images again (unless
// the forward pass kept the columns) and adds the parts' products; the bias
// gradient sums the output gradient per channel directly.
func (p *planner) convGrad(i int, n *G.Node, c ConvGradOp, in []Buf) {
	fwd := c.ConvForward()
	g := convOf(fwd)
	which := c.ConvGradWhich()
	out := p.out(n)
	x, w, dy := in[0], in[1], in[2]
	be := p.be
	if which == 2 {
		p.add(fmt.Sprintf("%v", n.Op()), func() { be.SumKeep(dy, out, g.N, g.O, g.PDim()) })
		p.release(i, n)
		return
	}
	dx, dw := NoBuf, NoBuf
	if which == 0 {
		dx = out
	} else {
		dw = out
	}
	name := fmt.Sprintf("%v", n.Op())
	if m := p.pairOf(i, n, c); m != nil {
		p.skip[m.ID()] = true // released at its position
		if which == 0 {
			dw = p.out(m)
		} else {
			dx = p.out(m)
		}
		name += " + " + fmt.Sprintf("%v", m.Op())
	}
	cols, unfold := p.cols, true
	var kept []Buf
	ps := p.parts(g, x, dx, dy, Plain())
	if p.parted[children(p.g.G, n)[2].ID()] > 0 { // dy lies as the product did
		for k := range ps {
			ps[k].t, ps[k].swap = ps[k].out, false
		}
	}
	if dw != NoBuf && p.keep[fwd] {
		k, ok := p.kept[fwd]
		if !ok || len(k) != len(ps) {
			p.fail("the gradient %v has no forward convolution", n.Op())
			return
		}
		kept, unfold = k, false
	}
	P, KD := g.PDim(), g.KDim()
	p.add(name, func() {
		for k := range ps {
			pt := &ps[k]
			nP := pt.g.N * P
			if pt.swap {
				be.Swap01(pt.out, pt.t, pt.g.N, g.O, P, Plain()) // dY' = O × n·P
			}
			if dx != NoBuf {
				be.Gemm(true, false, KD, nP, g.O, w, pt.t, cols, 0)
				be.Col2im(cols, pt.dimg, pt.g)
			}
			if dw != NoBuf {
				if unfold {
					be.Im2col(pt.img, cols, pt.g)
					be.Gemm(false, true, g.O, KD, nP, pt.t, cols, dw, pt.beta)
				} else {
					be.Gemm(false, true, g.O, KD, nP, pt.t, kept[k], dw, pt.beta)
				}
			}
		}
	})
	p.release(i, n)
}

// pairOf returns the convolution's other gradient (image or filter) when
// it is the node after n and reads the same output gradient.
func (p *planner) pairOf(i int, n *G.Node, c ConvGradOp) *G.Node {
	if i+1 >= len(p.live) {
		return nil
	}
	m := p.live[i+1]
	mc, ok := m.Op().(ConvGradOp)
	if !ok || mc.ConvForward() != c.ConvForward() || mc.ConvGradWhich()+c.ConvGradWhich() != 1 || p.skip[m.ID()] || p.fused[m.ID()] != nil {
		return nil
	}
	if _, bound := p.buf[m.ID()]; bound {
		return nil
	}
	a, b := children(p.g.G, n), children(p.g.G, m)
	if len(a) != 3 || len(b) != 3 || p.root(a[2]) != p.root(b[2]) || p.root(a[0]) != p.root(b[0]) || p.root(a[1]) != p.root(b[1]) {
		return nil
	}
	return m
}

// fallback runs an op the executor does not know through gorgonia on the
// CPU: inputs are copied out, the op's Do runs, the result is copied back.
func (p *planner) fallback(i int, n *G.Node, ins []*G.Node, in []Buf) {
	op := n.Op()
	name := fmt.Sprintf("%T %v", op, op)
	p.prog.Fallbacks = append(p.prog.Fallbacks, name)
	out := p.out(n)
	osz := size(n.Shape())
	host := make([][]float32, len(ins))
	shapes := make([]tensor.Shape, len(ins))
	for j, c := range ins {
		host[j] = make([]float32, max(size(c.Shape()), 1))
		shapes[j] = c.Shape()
	}
	be := p.be
	pp := p
	p.add(name, func() {
		vals := make([]G.Value, len(ins))
		for j := range ins {
			if err := be.Download(host[j], in[j]); err != nil {
				pp.prog.setErr(err)
				return
			}
			if len(shapes[j]) == 0 {
				vals[j] = G.NewF32(host[j][0])
			} else {
				vals[j] = tensor.New(tensor.WithShape(shapes[j]...), tensor.WithBacking(host[j]))
			}
		}
		v, err := op.Do(vals...)
		if err != nil {
			pp.prog.setErr(fmt.Errorf("%w: %s on the CPU: %w", ErrExec, name, err))
			return
		}
		switch d := v.Data().(type) {
		case float32:
			be.Upload(out, []float32{d})
		case []float32:
			if len(d) != osz {
				pp.prog.setErr(fmt.Errorf("%w: %s returned %d values, want %d", ErrExec, name, len(d), osz))
				return
			}
			be.Upload(out, d)
		default:
			pp.prog.setErr(fmt.Errorf("%w: %s returned %T", ErrExec, name, d))
		}
	})
	p.release(i, n)
}
