package optim

import (
	"math"
	"testing"
)

func TestAdamFirstStep(t *testing.T) {
	p := [][]float32{{1, -2}}
	g := [][]float32{{0.5, -0.25}}
	a := NewAdam(0)
	a.Step(p, g, 0.1)
	// After one bias-corrected step Adam moves each weight by lr·sign(g).
	if math.Abs(float64(p[0][0]-0.9)) > 1e-5 || math.Abs(float64(p[0][1]+1.9)) > 1e-5 {
		t.Fatalf("params %v", p)
	}
	if g[0][0] != 0 || g[0][1] != 0 {
		t.Fatal("gradients must be zeroed")
	}
	st := a.State()
	b := NewAdam(0)
	if err := b.SetState(st); err != nil || b.t != 1 {
		t.Fatal(err)
	}
	if err := b.SetState(State{Kind: "sgd"}); err == nil {
		t.Fatal("an SGD state restored Adam")
	}
}

func TestSGDMomentum(t *testing.T) {
	p := [][]float32{{1}}
	s := &SGD{Momentum: 0.9}
	s.Step(p, [][]float32{{1}}, 0.1) // v=1, p=0.9
	s.Step(p, [][]float32{{1}}, 0.1) // v=1.9, p=0.71
	if math.Abs(float64(p[0][0]-0.71)) > 1e-6 {
		t.Fatalf("p = %v", p[0][0])
	}
	if _, err := New("rmsprop", 0, 0); err == nil {
		t.Fatal("unknown optimiser accepted")
	}
}

func TestSchedules(t *testing.T) {
	cos := Schedule{Base: 1, Kind: "cosine", WarmupSteps: 10, TotalSteps: 110, MinFactor: 0.01}
	if r := cos.Rate(0); math.Abs(float64(r)-0.1) > 1e-6 {
		t.Errorf("warm-up start %v", r)
	}
	if r := cos.Rate(10); math.Abs(float64(r)-1) > 1e-6 {
		t.Errorf("peak %v", r)
	}
	if r := cos.Rate(60); math.Abs(float64(r)-0.505) > 1e-3 {
		t.Errorf("half-way %v", r)
	}
	if r := cos.Rate(110); math.Abs(float64(r)-0.01) > 1e-6 {
		t.Errorf("end %v", r)
	}
	step := Schedule{Base: 1, Kind: "step", StepEvery: 5, Gamma: 0.1}
	if step.Rate(4) != 1 || math.Abs(float64(step.Rate(5))-0.1) > 1e-7 || math.Abs(float64(step.Rate(12))-0.01) > 1e-8 {
		t.Errorf("step: %v %v %v", step.Rate(4), step.Rate(5), step.Rate(12))
	}
	if (Schedule{Base: 0.3, Kind: "constant"}).Rate(1000) != 0.3 {
		t.Error("constant")
	}
}

func TestScheduleContinues(t *testing.T) {
	// A 10-step cosine run extended by 10 steps at step 10: the rate goes
	// on from where it was (1% of Base), never back up to Base.
	s := Schedule{Base: 1, Kind: "cosine", TotalSteps: 20, MinFactor: 0.01, ContinueStep: 10, ContinueRate: 0.01}
	if r := s.Rate(10); math.Abs(float64(r)-0.01) > 1e-7 {
		t.Errorf("first continued step %v, want 0.01", r)
	}
	prev := float32(1)
	for i := 10; i <= 20; i++ {
		r := s.Rate(i)
		if r > prev+1e-9 || r > 0.0100001 {
			t.Fatalf("step %d: rate %v rose (before %v)", i, r, prev)
		}
		prev = r
	}
	if r := s.Rate(20); math.Abs(float64(r)-0.001) > 1e-7 {
		t.Errorf("end %v, want a tenth of the continued rate", r)
	}
	// Continued from high up, it decays to the original floor.
	s = Schedule{Base: 1, Kind: "cosine", TotalSteps: 20, MinFactor: 0.01, ContinueStep: 5, ContinueRate: 0.5}
	if r := s.Rate(20); math.Abs(float64(r)-0.01) > 1e-7 {
		t.Errorf("end %v, want the floor 0.01", r)
	}
	if r := s.Rate(4); r >= 1.0001 || r < 0.5 {
		t.Errorf("before the continuation the original schedule: %v", r)
	}
}
