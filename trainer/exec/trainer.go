package exec

import (
	"fmt"

	"gpuwizard/trainer/optim"
)

// Optim names the optimiser the trainer runs on the backend, with the
// arithmetic of package optim.
type Optim struct {
	Kind        string // "adam" or "sgd"
	Momentum    float32
	WeightDecay float32
}

// Trainer keeps a model resident on a backend: one program for the
// training step, one for evaluation sharing its parameters and batch-norm
// statistics, and the optimiser's buffers (one block each, laid out as the
// parameters, so one kernel updates every parameter).
type Trainer struct {
	be          Backend
	train, eval *Program
	opt         Optim
	adam        *optim.Adam
	steps       int64
	m, v        Buf   // Adam moments (or SGD velocity in m), ParamTotal floats each
	mv, vv      []Buf // their views per parameter
	scal        []float32
	ring        [depth]result // results of launched steps, oldest at head
	head, n     int
	loss        [1]float32
	evalOut     []float32
	// On an asynchronous backend: page-locked batches and results per
	// slot, and each slot's captured step.
	async     Async
	pin       [depth]pinned
	graphs    bool // capture the step (where the backend can)
	warm      bool // a step has run eagerly: lazily sized buffers exist
	graph     [depth]Captured
	captured  [depth]bool
	collected []float32
	graphErr  error // why capturing failed (the steps then run eagerly)
}

// pinned is one slot's page-locked memory: the input block (batch, labels
// and the optimiser's scalars) and the loss and logits.
type pinned struct {
	in, out []float32
}

// depth is how many launched steps may await Collect.
const depth = 2

// result is one step's loss and logits.
type result struct {
	loss   float32
	logits []float32
}

// NewTrainer plans both graphs on be. The training graph's outputs are the
// loss then the logits; the evaluation graph's output is the logits.
func NewTrainer(be Backend, train, eval Graph, opt Optim) (*Trainer, error) {
	if opt.Kind != "adam" && opt.Kind != "sgd" {
		return nil, fmt.Errorf("%w: optimizer %q is not adam or sgd", ErrExec, opt.Kind)
	}
	if len(train.Outputs) != 2 || len(eval.Outputs) != 1 || len(train.Grads) != len(train.Params) {
		return nil, fmt.Errorf("%w: the training graph needs loss and logits and one gradient per parameter", ErrExec)
	}
	nscal := SGDScalars
	if opt.Kind == "adam" {
		nscal = AdamScalars
	}
	tp, err := Compile(be, train, Options{Extra: nscal})
	if err != nil {
		return nil, err
	}
	ep, err := Compile(be, eval, Options{Params: tp.Params, BNRunning: tp.BNRunning, reuse: tp})
	if err != nil {
		return nil, err
	}
	t := &Trainer{be: be, train: tp, eval: ep, opt: opt, adam: optim.NewAdam(opt.WeightDecay), scal: make([]float32, nscal),
		evalOut: make([]float32, ep.OutputSize(0))}
	for i := range t.ring {
		t.ring[i].logits = make([]float32, tp.OutputSize(1))
	}
	state := func() (Buf, []Buf, error) {
		b, err := be.Alloc(tp.ParamTotal)
		if err != nil {
			return NoBuf, nil, fmt.Errorf("%w: optimiser state: %w", ErrExec, err)
		}
		var views []Buf
		for i, n := range tp.ParamSize {
			v, err := be.View(b, tp.ParamOff[i], n)
			if err != nil {
				return NoBuf, nil, fmt.Errorf("%w: optimiser state: %w", ErrExec, err)
			}
			views = append(views, v)
		}
		return b, views, nil
	}
	if t.m, t.mv, err = state(); err != nil {
		return nil, err
	}
	t.v = NoBuf
	if opt.Kind == "adam" {
		if t.v, t.vv, err = state(); err != nil {
			return nil, err
		}
	}
	if a, ok := be.(Async); ok {
		t.async = a
		for i := range t.pin {
			if t.pin[i].in, err = a.HostAlloc(tp.InTotal); err != nil {
				return nil, fmt.Errorf("%w: page-locked input: %w", ErrExec, err)
			}
			if t.pin[i].out, err = a.HostAlloc(1 + tp.OutputSize(1)); err != nil {
				return nil, fmt.Errorf("%w: page-locked output: %w", ErrExec, err)
			}
		}
		t.collected = make([]float32, tp.OutputSize(1))
		t.graphs = a.CanCapture() && len(tp.Fallbacks) == 0
	}
	return t, nil
}

// SetGraphs chooses, on a backend that can capture (CUDA), between
// capturing the training step once per slot and replaying it (the
// default) and queueing every kernel of every step (eager: for debugging,
// or to compare). It says whether graphs are used.
func (t *Trainer) SetGraphs(on bool) bool {
	t.graphs = on && t.async != nil && t.async.CanCapture() && len(t.train.Fallbacks) == 0
	return t.graphs
}

// Graphs says whether training steps are captured and replayed, and, when
// a capture failed and the steps went on eagerly, why.
func (t *Trainer) Graphs() (bool, error) { return t.graphs, t.graphErr }

// Backend is the backend the trainer runs on.
func (t *Trainer) Backend() Backend { return t.be }

// Programs returns the training and evaluation programs.
func (t *Trainer) Programs() (train, eval *Program) { return t.train, t.eval }

// Forward runs forward and backward on one batch and returns the loss and
// the logits (valid until the next call). The gradients stay on the backend.
func (t *Trainer) Forward(x, y []float32) (float32, []float32, error) {
	r := &t.ring[(t.head+t.n)%depth]
	if err := t.train.Run(x, y); err != nil {
		return 0, nil, err
	}
	if err := t.train.Read(0, t.loss[:]); err != nil {
		return 0, nil, err
	}
	if err := t.train.Read(1, r.logits); err != nil {
		return 0, nil, err
	}
	r.loss = t.loss[0]
	return r.loss, r.logits, nil
}

// scalars fills t.scal with the next update's scalars at rate lr and
// counts the step.
func (t *Trainer) scalars(lr float32) {
	t.steps++
	if t.opt.Kind == "adam" {
		PutAdam(t.scal, t.adam.StepAt(lr, t.steps))
		return
	}
	PutSGD(t.scal, lr, t.opt.Momentum, t.opt.WeightDecay)
}

// optimise queues the update of every parameter: one kernel.
func (t *Trainer) optimise() {
	tp := t.train
	if t.opt.Kind == "adam" {
		t.be.Adam(tp.ParamBlock, tp.GradBlock, t.m, t.v, tp.ParamTotal, tp.Extra)
		return
	}
	t.be.SGD(tp.ParamBlock, tp.GradBlock, t.m, tp.ParamTotal, tp.Extra)
}

// Update applies one optimiser step with learning rate lr.
func (t *Trainer) Update(lr float32) error {
	t.scalars(lr)
	t.be.Upload(t.train.Extra, t.scal)
	t.optimise()
	return t.be.Err()
}

// Launch runs (or, on an asynchronous backend, queues) one training step
// on batch x, y at rate lr: forward, backward and the update. Its loss and
// logits come from Collect, in launch order; at most Depth steps may wait
// for it. On an asynchronous backend the batch goes through page-locked
// memory, and the step, once captured, is replayed as one graph.
func (t *Trainer) Launch(x, y []float32, lr float32) error {
	if t.n == depth {
		return fmt.Errorf("%w: %d steps await Collect", ErrExec, t.n)
	}
	if t.async == nil {
		if _, _, err := t.Forward(x, y); err != nil {
			return err
		}
		if err := t.Update(lr); err != nil {
			return err
		}
		t.n++
		return nil
	}
	tp := t.train
	if len(x) != tp.inSize[0] || len(y) != tp.inSize[1] {
		return fmt.Errorf("%w: a batch of %d inputs and %d labels, want %d and %d", ErrExec, len(x), len(y), tp.inSize[0], tp.inSize[1])
	}
	q := (t.head + t.n) % depth
	p := &t.pin[q]
	copy(p.in[tp.InOff[0]:], x)
	copy(p.in[tp.InOff[1]:], y)
	t.scalars(lr)
	copy(p.in[tp.ExtraOff:], t.scal)
	switch {
	case t.graphs && t.warm:
		if !t.captured[q] {
			g, err := t.async.Capture(func() { t.queueStep(q) })
			if err != nil { // go on eagerly, and say why
				t.graphs, t.graphErr = false, err
				t.queueStep(q)
				break
			}
			t.graph[q], t.captured[q] = g, true
		}
		t.async.Replay(t.graph[q])
	default:
		t.queueStep(q)
		t.warm = true
	}
	t.async.Record(q)
	if err := t.be.Err(); err != nil {
		return err
	}
	t.n++
	return nil
}

// queueStep queues slot q's step: the input block from page-locked
// memory, every planned kernel, the update, and the loss and logits back.
func (t *Trainer) queueStep(q int) {
	tp, p := t.train, &t.pin[q]
	t.async.UploadAsync(tp.InBlock, p.in)
	for _, f := range tp.steps {
		f()
	}
	t.optimise()
	t.async.DownloadAsync(p.out[:1], tp.outputs[0])
	t.async.DownloadAsync(p.out[1:], tp.outputs[1])
}

// Collect returns the loss and logits of the oldest launched step not yet
// collected (the logits are valid until the next Collect), waiting for it
// on an asynchronous backend.
func (t *Trainer) Collect() (float32, []float32, error) {
	if t.n == 0 {
		return 0, nil, fmt.Errorf("%w: no step awaits Collect", ErrExec)
	}
	q := t.head
	t.head = (t.head + 1) % depth
	t.n--
	if t.async == nil {
		return t.ring[q].loss, t.ring[q].logits, nil
	}
	if err := t.async.Wait(q); err != nil {
		return 0, nil, err
	}
	copy(t.collected, t.pin[q].out[1:])
	return t.pin[q].out[0], t.collected, nil
}

// Pending is the number of launched steps not yet collected.
func (t *Trainer) Pending() int { return t.n }

// Depth is how many launched steps may await Collect.
func (t *Trainer) Depth() int { return depth }

// Step is Launch then Collect: one step, its results at once.
func (t *Trainer) Step(x, y []float32, lr float32) (float32, []float32, error) {
	for t.n > 0 { // results nobody collected
		if _, _, err := t.Collect(); err != nil {
			return 0, nil, err
		}
	}
	if err := t.Launch(x, y, lr); err != nil {
		return 0, nil, err
	}
	return t.Collect()
}

// Predict runs the evaluation graph and returns the logits (valid until
// the next call).
func (t *Trainer) Predict(x []float32) ([]float32, error) {
	if err := t.eval.Run(x); err != nil {
		return nil, err
	}
	if err := t.eval.Read(0, t.evalOut); err != nil {
		return nil, err
	}
	return t.evalOut, nil
}

// Grads copies the last step's gradients into dst (one slice per
// parameter).
func (t *Trainer) Grads(dst [][]float32) error {
	for i, b := range t.train.Grads {
		if err := t.be.Download(dst[i], b); err != nil {
			return fmt.Errorf("%w: reading gradient %d: %w", ErrExec, i, err)
		}
	}
	return nil
}

// ReadParams copies the parameters and batch-norm statistics back to the
// host: params into dst, statistics into the graph's batch-norm ops.
func (t *Trainer) ReadParams(dst [][]float32) error {
	for i, b := range t.train.Params {
		if err := t.be.Download(dst[i], b); err != nil {
			return fmt.Errorf("%w: reading parameter %d: %w", ErrExec, i, err)
		}
	}
	for i, op := range t.train.BNOps {
		if err := t.be.Download(op.NormRunning(), t.train.BNRunning[i]); err != nil {
			return fmt.Errorf("%w: reading batch-norm statistics: %w", ErrExec, err)
		}
	}
	return nil
}

// WriteParams uploads parameters (and the batch-norm ops' statistics), for
// a resumed run.
func (t *Trainer) WriteParams(src [][]float32) error {
	for i, b := range t.train.Params {
		if len(src[i]) != t.train.ParamSize[i] {
			return fmt.Errorf("%w: parameter %d has %d values, want %d", ErrExec, i, len(src[i]), t.train.ParamSize[i])
		}
		t.be.Upload(b, src[i])
	}
	for i, op := range t.train.BNOps {
		t.be.Upload(t.train.BNRunning[i], op.NormRunning())
	}
	return t.be.Err()
}

// State returns the optimiser state in package optim's format.
func (t *Trainer) State() (optim.State, error) {
	st := optim.State{Kind: t.opt.Kind, Steps: t.steps}
	for _, list := range [][]Buf{t.mv, t.vv} {
		for i, b := range list {
			d := make([]float32, t.train.ParamSize[i])
			if err := t.be.Download(d, b); err != nil {
				return st, fmt.Errorf("%w: reading optimiser state: %w", ErrExec, err)
			}
			st.Buffers = append(st.Buffers, d)
		}
	}
	return st, nil
}

// SetState restores a state saved by State or by package optim.
func (t *Trainer) SetState(st optim.State) error {
	want := len(t.mv) + len(t.vv)
	if st.Kind != t.opt.Kind || len(st.Buffers) != want {
		return fmt.Errorf("%w: saved %s state (%d buffers) cannot restore %s", ErrExec, st.Kind, len(st.Buffers), t.opt.Kind)
	}
	for i, b := range append(append([]Buf{}, t.mv...), t.vv...) {
		n := t.train.ParamSize[i%len(t.mv)]
		if len(st.Buffers[i]) != n {
			return fmt.Errorf("%w: optimiser buffer %d has %d values, want %d", ErrExec, i, len(st.Buffers[i]), n)
		}
		t.be.Upload(b, st.Buffers[i])
	}
	t.steps = st.Steps
	return t.be.Err()
}
