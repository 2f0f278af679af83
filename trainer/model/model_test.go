package model

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

func batch(n *Net, seed int64) ([]float32, []float32) {
	return n.RandomBatch(rand.New(rand.NewSource(seed)))
}

// TestGradientsMatchFiniteDifferences checks G.Grad's gradients of the loss
// for a sample of every parameter of each model against central
// differences (float32, so the tolerance is loose but catches wrong ops).
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	specs := []Spec{
		{Kind: MLP, Channels: 1, Height: 8, Width: 8, Classes: 3, Hidden: 16},
		{Kind: LeNet, Channels: 1, Height: 28, Width: 28, Classes: 4},
		{Kind: CNN, Channels: 3, Height: 8, Width: 8, Classes: 3},
	}
	for _, s := range specs {
		t.Run(s.Kind, func(t *testing.T) {
			n, err := Build(s, 4, 3)
			if err != nil {
				t.Fatal(err)
			}
			x, y := batch(n, 5)
			if _, _, err := n.TrainStep(x, y); err != nil {
				t.Fatal(err)
			}
			grads := make([][]float32, len(n.Params))
			for i, p := range n.Params {
				grads[i] = append([]float32(nil), p.Grad()...)
				clear(p.Grad())
			}
			loss := func() float64 {
				l, _, err := n.TrainStep(x, y)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range n.Params {
					clear(p.Grad())
				}
				return float64(l)
			}
			rng := rand.New(rand.NewSource(1))
			checked, bad := 0, 0
			for i, p := range n.Params {
				for k := 0; k < 3; k++ {
					j := rng.Intn(len(p.Data))
					old := p.Data[j]
					const h = 1e-3 // smaller steps cross fewer ReLU and max-pool kinks
					p.Data[j] = old + h
					up := loss()
					p.Data[j] = old - h
					down := loss()
					p.Data[j] = old
					num := (up - down) / (2 * h)
					ana := float64(grads[i][j])
					if math.Abs(num-ana) > 2e-3+0.05*math.Max(math.Abs(num), math.Abs(ana)) {
						bad++
						t.Logf("%s[%d]: analytic %.6f numeric %.6f", p.Name, j, ana, num)
					}
					checked++
				}
			}
			if bad > checked/10 {
				t.Fatalf("%d of %d gradient entries disagree", bad, checked)
			}
		})
	}
}

func TestTrainingLowersTheLoss(t *testing.T) {
	n, err := Build(Spec{Kind: CNN, Channels: 3, Height: 8, Width: 8, Classes: 2}, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	x, y := batch(n, 2)
	first, _, _ := n.TrainStep(x, y)
	var last float32
	for i := 0; i < 30; i++ {
		for _, p := range n.Params {
			g := p.Grad()
			for k := range p.Data {
				p.Data[k] -= 0.05 * g[k]
				g[k] = 0
			}
		}
		last, _, _ = n.TrainStep(x, y)
	}
	if !(last < first*0.5) {
		t.Fatalf("loss %v → %v: gradient descent should fit one batch", first, last)
	}
	// Evaluation uses the running statistics and gives finite logits.
	logits, err := n.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range logits {
		if math.IsNaN(float64(v)) {
			t.Fatal("NaN logits in evaluation")
		}
	}
	st := n.States()
	if len(st) != 8 || n.SetStates(st) != nil || n.SetStates(st[:2]) == nil {
		t.Fatal("batch-norm states do not round-trip")
	}
}

func TestSpecValidation(t *testing.T) {
	for _, s := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "resnet", Channels: 1, Height: 28, Width: 28, Classes: 10}, "not one of"},
		{Spec{Kind: LeNet, Channels: 1, Height: 32, Width: 32, Classes: 10}, "lenet takes 28x28"},
		{Spec{Kind: CNN, Channels: 3, Height: 30, Width: 30, Classes: 10}, "divisible by 4"},
		{Spec{Kind: MLP, Channels: 2, Height: 28, Width: 28, Classes: 10}, "grey (1) or colour (3)"},
		{Spec{Kind: MLP, Channels: 1, Height: 28, Width: 28, Classes: 1}, "need 2 to 1000"},
		{Spec{Kind: MLP, Channels: 1, Height: 10000, Width: 28, Classes: 10}, "between 8 and 256"},
	} {
		if err := s.spec.Validate(); err == nil || !strings.Contains(err.Error(), s.want) {
			t.Errorf("%+v: %v", s.spec, err)
		}
	}
	if _, err := Build(Spec{Kind: MLP, Channels: 1, Height: 8, Width: 8, Classes: 2}, 0, 1); err == nil {
		t.Error("batch 0 accepted")
	}
}

// TestBatchNormNormalises: the CNN's batch norm gives zero mean and unit
// variance per channel in training (gorgonia's own BatchNormOp does not
// under the tape machine: it scales a stale register), moves the running
// statistics towards the batch's, and uses them in evaluation.
func TestBatchNormNormalises(t *testing.T) {
	op := newBNOp(2, 1, 2) // one channel, values 2 4 6 8: mean 5, variance 5 (unbiased 20/3)
	x := tensor.New(tensor.WithShape(2, 1, 1, 2), tensor.WithBacking([]float32{2, 4, 6, 8}))
	v, err := op.Do(x)
	if err != nil {
		t.Fatal(err)
	}
	got := v.Data().([]float32)
	s := 1 / math.Sqrt(5+1e-5)
	for i, want := range []float64{-3 * s, -s, s, 3 * s} {
		if math.Abs(float64(got[i])-want) > 1e-5 {
			t.Fatalf("normalised %v, want ±%.4f, ±%.4f", got, s, 3*s)
		}
	}
	if math.Abs(float64(op.running[0])-0.5) > 1e-6 || math.Abs(float64(op.running[1])-(0.9+0.1*20.0/3)) > 1e-5 {
		t.Fatalf("running statistics %v, want 0.5 and %.4f", op.running, 0.9+0.1*20.0/3)
	}
	op.training = false
	v, err = op.Do(x)
	if err != nil {
		t.Fatal(err)
	}
	if want := (2 - 0.5) / math.Sqrt(0.9+0.1*20.0/3+1e-5); math.Abs(float64(v.Data().([]float32)[0])-want) > 1e-5 {
		t.Fatalf("evaluation gives %v, want %.5f first", v.Data(), want)
	}
}

func TestReleaseGraphs(t *testing.T) {
	n, err := Build(Spec{Kind: CNN, Channels: 1, Height: 8, Width: 8, Classes: 2}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	x, y := n.RandomBatch(rand.New(rand.NewSource(1)))
	if _, _, err := n.TrainStep(x, y); err != nil {
		t.Fatal(err)
	}
	st := n.States()
	n.ReleaseGraphs()
	if _, _, err := n.TrainStep(x, y); !errors.Is(err, ErrReleased) {
		t.Errorf("TrainStep after release: %v", err)
	}
	if _, err := n.Predict(x); !errors.Is(err, ErrReleased) {
		t.Errorf("Predict after release: %v", err)
	}
	// What checkpoints need stays: parameters and batch-norm statistics.
	if len(n.Params) == 0 || len(n.Params[0].Data) == 0 || len(n.States()) != len(st) || n.SetStates(st) != nil {
		t.Error("parameters or statistics lost")
	}
}
