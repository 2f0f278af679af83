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
// statistics, and the optimiser's buffers.
type Trainer struct {
	be          Backend
	train, eval *Program
	opt         Optim
	steps       int64
	m, v        []Buf // Adam moments, or SGD velocity in m
	loss        []float32
	logits      []float32
	evalOut     []float32
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
	tp, err := Compile(be, train, Options{})
	if err != nil {
		return nil, err
	}
	ep, err := Compile(be, eval, Options{Params: tp.Params, BNRunning: tp.BNRunning})
	if err != nil {
		return nil, err
	}
	t := &Trainer{be: be, train: tp, eval: ep, opt: opt, loss: make([]float32, 1),
		logits: make([]float32, tp.OutputSize(1)), evalOut: make([]float32, ep.OutputSize(0))}
	for _, n := range tp.ParamSize {
		m, err := be.Alloc(n)
		if err != nil {
			return nil, fmt.Errorf("%w: optimiser state: %w", ErrExec, err)
		}
		t.m = append(t.m, m)
		if opt.Kind == "adam" {
			v, err := be.Alloc(n)
			if err != nil {
				return nil, fmt.Errorf("%w: optimiser state: %w", ErrExec, err)
			}
			t.v = append(t.v, v)
		}
	}
	return t, nil
}

// Backend is the backend the trainer runs on.
func (t *Trainer) Backend() Backend { return t.be }

// Programs returns the training and evaluation programs.
func (t *Trainer) Programs() (train, eval *Program) { return t.train, t.eval }

// Forward runs forward and backward on one batch and returns the loss and
// the logits (valid until the next call). The gradients stay on the backend.
func (t *Trainer) Forward(x, y []float32) (float32, []float32, error) {
	if err := t.train.Run(x, y); err != nil {
		return 0, nil, err
	}
	if err := t.train.Read(0, t.loss); err != nil {
		return 0, nil, err
	}
	if err := t.train.Read(1, t.logits); err != nil {
		return 0, nil, err
	}
	return t.loss[0], t.logits, nil
}

// Update applies one optimiser step with learning rate lr.
func (t *Trainer) Update(lr float32) error {
	t.steps++
	switch t.opt.Kind {
	case "adam":
		a := optim.NewAdam(t.opt.WeightDecay).StepAt(lr, t.steps)
		for i, p := range t.train.Params {
			t.be.Adam(p, t.train.Grads[i], t.m[i], t.v[i], t.train.ParamSize[i], a)
		}
	default:
		for i, p := range t.train.Params {
			t.be.SGD(p, t.train.Grads[i], t.m[i], t.train.ParamSize[i], lr, t.opt.Momentum, t.opt.WeightDecay)
		}
	}
	return t.be.Err()
}

// Step is Forward then Update.
func (t *Trainer) Step(x, y []float32, lr float32) (float32, []float32, error) {
	loss, logits, err := t.Forward(x, y)
	if err != nil {
		return 0, nil, err
	}
	return loss, logits, t.Update(lr)
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
	for _, list := range [][]Buf{t.m, t.v} {
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
	want := len(t.m) + len(t.v)
	if st.Kind != t.opt.Kind || len(st.Buffers) != want {
		return fmt.Errorf("%w: saved %s state (%d buffers) cannot restore %s", ErrExec, st.Kind, len(st.Buffers), t.opt.Kind)
	}
	for i, b := range append(append([]Buf{}, t.m...), t.v...) {
		n := t.train.ParamSize[i%len(t.m)]
		if len(st.Buffers[i]) != n {
			return fmt.Errorf("%w: optimiser buffer %d has %d values, want %d", ErrExec, i, len(st.Buffers[i]), n)
		}
		t.be.Upload(b, st.Buffers[i])
	}
	t.steps = st.Steps
	return t.be.Err()
}
