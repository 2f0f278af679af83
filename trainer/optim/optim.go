// Package optim holds the optimisers and learning-rate schedules. They work
// on plain float32 slices, so their state can be checkpointed and the
// learning rate changed on every step.
package optim

import (
	"errors"
	"fmt"
	"math"
)

// ErrOptim is returned (wrapped) for invalid settings.
var ErrOptim = errors.New("optim")

// Optimizer updates parameters from their gradients and zeroes the gradients.
type Optimizer interface {
	// Step applies one update with learning rate lr. params[i] and grads[i]
	// have the same length; grads are zeroed afterwards.
	Step(params, grads [][]float32, lr float32)
	// State returns the optimiser's buffers and step count, for checkpoints.
	State() State
	// SetState restores State; the buffers must match the parameters.
	SetState(State) error
}

// State is an optimiser's saved state.
type State struct {
	Kind    string
	Steps   int64
	Buffers [][]float32 // Adam: m then v per parameter; SGD: velocity per parameter
}

// Adam is Kingma & Ba's optimiser with bias correction and optional
// decoupled weight decay. Defaults: β1 0.9, β2 0.999, ε 1e-8.
type Adam struct {
	Beta1, Beta2, Eps, WeightDecay float32
	t                              int64
	m, v                           [][]float32
}

// NewAdam returns Adam with the usual defaults.
func NewAdam(weightDecay float32) *Adam {
	return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay}
}

func (a *Adam) init(params [][]float32) {
	if a.m != nil {
		return
	}
	for _, p := range params {
		a.m = append(a.m, make([]float32, len(p)))
		a.v = append(a.v, make([]float32, len(p)))
	}
}

// AdamStep is one Adam update's scalars, bias correction folded in: the
// executor's backends apply the same update with them.
type AdamStep struct {
	Beta1, Beta2, Step, Eps, Decay float32
}

// StepAt returns the scalars of update number t (1-based) at rate lr.
func (a *Adam) StepAt(lr float32, t int64) AdamStep {
	c1 := 1 - float32(math.Pow(float64(a.Beta1), float64(t)))
	c2 := 1 - float32(math.Pow(float64(a.Beta2), float64(t)))
	return AdamStep{Beta1: a.Beta1, Beta2: a.Beta2, Step: lr * float32(math.Sqrt(float64(c2))) / c1,
		Eps: a.Eps * float32(math.Sqrt(float64(c2))), Decay: 1 - lr*a.WeightDecay}
}

// AdamUpdate applies s to one tensor p with gradient g and moments m, v.
func AdamUpdate(p, g, m, v []float32, s AdamStep) {
	b1, b2 := s.Beta1, s.Beta2
	for k := range p {
		gk := g[k]
		mk := b1*m[k] + (1-b1)*gk
		vk := b2*v[k] + (1-b2)*gk*gk
		m[k], v[k] = mk, vk
		p[k] = p[k]*s.Decay - s.Step*mk/(float32(math.Sqrt(float64(vk)))+s.Eps)
	}
}

// Step implements Optimizer.
func (a *Adam) Step(params, grads [][]float32, lr float32) {
	a.init(params)
	a.t++
	s := a.StepAt(lr, a.t)
	for i, p := range params {
		if len(grads[i]) != len(p) {
			continue
		}
		AdamUpdate(p, grads[i], a.m[i], a.v[i], s)
		clear(grads[i])
	}
}

// State implements Optimizer.
func (a *Adam) State() State {
	return State{Kind: "adam", Steps: a.t, Buffers: append(append([][]float32{}, a.m...), a.v...)}
}

// SetState implements Optimizer.
func (a *Adam) SetState(s State) error {
	if s.Kind != "adam" || len(s.Buffers)%2 != 0 {
		return fmt.Errorf("%w: saved %s state cannot restore Adam", ErrOptim, s.Kind)
	}
	h := len(s.Buffers) / 2
	a.t, a.m, a.v = s.Steps, s.Buffers[:h], s.Buffers[h:]
	return nil
}

// SGD is stochastic gradient descent with (Nesterov-free) momentum and
// weight decay.
type SGD struct {
	Momentum, WeightDecay float32
	t                     int64
	vel                   [][]float32
}

// Step implements Optimizer.
func (s *SGD) Step(params, grads [][]float32, lr float32) {
	if s.vel == nil {
		for _, p := range params {
			s.vel = append(s.vel, make([]float32, len(p)))
		}
	}
	s.t++
	for i, p := range params {
		if len(grads[i]) != len(p) {
			continue
		}
		SGDUpdate(p, grads[i], s.vel[i], lr, s.Momentum, s.WeightDecay)
		clear(grads[i])
	}
}

// SGDUpdate applies one SGD step with momentum and weight decay to one
// tensor p with gradient g and velocity vel.
func SGDUpdate(p, g, vel []float32, lr, momentum, decay float32) {
	for k := range p {
		gk := g[k] + decay*p[k]
		vel[k] = momentum*vel[k] + gk
		p[k] -= lr * vel[k]
	}
}

// State implements Optimizer.
func (s *SGD) State() State { return State{Kind: "sgd", Steps: s.t, Buffers: s.vel} }

// SetState implements Optimizer.
func (s *SGD) SetState(st State) error {
	if st.Kind != "sgd" {
		return fmt.Errorf("%w: saved %s state cannot restore SGD", ErrOptim, st.Kind)
	}
	s.t, s.vel = st.Steps, st.Buffers
	return nil
}

// New returns the named optimiser: "adam" or "sgd".
func New(name string, momentum, weightDecay float32) (Optimizer, error) {
	switch name {
	case "adam":
		return NewAdam(weightDecay), nil
	case "sgd":
		return &SGD{Momentum: momentum, WeightDecay: weightDecay}, nil
	}
	return nil, fmt.Errorf("%w: optimizer %q is not adam or sgd", ErrOptim, name)
}

// Schedule gives the learning rate at a step.
type Schedule struct {
	Base        float64 // peak learning rate
	Kind        string  // "constant", "step", "cosine"
	WarmupSteps int     // linear warm-up from Base/10 (or 0 for cosine from 0)
	TotalSteps  int     // for cosine: the step the rate reaches MinFactor×Base
	StepEvery   int     // for step: steps between decays
	Gamma       float64 // for step: the decay factor
	MinFactor   float64 // for cosine: the floor as a fraction of Base
	// ContinueStep and ContinueRate continue a cosine schedule that was
	// extended ("train more epochs"): from ContinueStep on, the rate
	// decays from ContinueRate (the rate the run had reached) to
	// ContinueFloor() at TotalSteps, instead of restarting at Base.
	ContinueStep int
	ContinueRate float64
}

// ContinueFloor is where a continued cosine schedule ends: the original
// floor (MinFactor×Base) when the continued rate is well above it, else a
// tenth of the continued rate (it still decays from there).
func (s Schedule) ContinueFloor() float64 {
	lo := s.Base * s.MinFactor
	if s.ContinueRate > 2*lo {
		return lo
	}
	return s.ContinueRate / 10
}

// Rate returns the learning rate for a step (0-based).
func (s Schedule) Rate(step int) float32 {
	if s.Kind == "cosine" && s.ContinueStep > 0 && s.ContinueRate > 0 && step >= s.ContinueStep {
		span := s.TotalSteps - s.ContinueStep
		if span <= 0 {
			return float32(s.ContinueRate)
		}
		t := math.Min(1, float64(step-s.ContinueStep)/float64(span))
		lo := s.ContinueFloor()
		return float32(lo + (s.ContinueRate-lo)*0.5*(1+math.Cos(math.Pi*t)))
	}
	if s.WarmupSteps > 0 && step < s.WarmupSteps {
		return float32(s.Base * float64(step+1) / float64(s.WarmupSteps))
	}
	switch s.Kind {
	case "step":
		if s.StepEvery > 0 && s.Gamma > 0 {
			return float32(s.Base * math.Pow(s.Gamma, float64((step-s.WarmupSteps)/s.StepEvery)))
		}
	case "cosine":
		span := s.TotalSteps - s.WarmupSteps
		if span > 0 {
			t := math.Min(1, float64(step-s.WarmupSteps)/float64(span))
			lo := s.Base * s.MinFactor
			return float32(lo + (s.Base-lo)*0.5*(1+math.Cos(math.Pi*t)))
		}
	}
	return float32(s.Base)
}
