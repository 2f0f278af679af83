package exec_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

// unfused is the Go backend seen only through Backend: the planner finds
// no NormSiLUer and plans the graph's ops one by one.
type unfused struct{ exec.Backend }

// TestNormSiLUFusedMatchesUnfused trains the detector on the Go backend
// with its conv-BN-SiLU blocks fused (one kernel each way per block) and
// without, from the same start on the same batches: every block must be
// fused, and the losses, gradients, parameters and batch-norm statistics
// must agree to float32 rounding step after step.
func TestNormSiLUFusedMatchesUnfused(t *testing.T) {
	// Whole batches (the convolutions' outputs C × N·P), and parts of two
	// images and one (31,104 floats of columns: two images of the first
	// convolution, one of the second).
	for _, scratch := range []int{0, 31104} {
		t.Run(fmt.Sprintf("scratch %d", scratch), func(t *testing.T) { testNormSiLUFused(t, scratch) })
	}
}

func testNormSiLUFused(t *testing.T, scratch int) {
	spec := model.Spec{Kind: model.DetN, Channels: 3, Height: 48, Width: 48, Classes: 3}
	run := func(be exec.Backend) (losses []float32, grads, params [][]float32, stats [][]float32, fused []string) {
		defer be.Close()
		tr, losses := trainSteps(t, be, spec, 5, 4, 7, exec.Optim{Kind: "sgd", Momentum: 0.9})
		train, _ := tr.Programs()
		grads = gradsOf(t, tr)
		for _, sz := range train.ParamSize {
			params = append(params, make([]float32, sz))
		}
		if err := tr.ReadParams(params); err != nil {
			t.Fatal(err)
		}
		for _, op := range train.BNOps {
			stats = append(stats, append([]float32(nil), op.NormRunning()...))
		}
		return losses, grads, params, stats, train.Fused
	}
	gb := exec.NewGoBackend()
	gb.SetConvScratch(scratch)
	l1, g1, p1, s1, fused := run(gb)
	l0, g0, p0, s0, plain := run(unfused{exec.NewGoBackend()})
	n := 0
	for _, f := range fused {
		if strings.Contains(f, "BatchNorm") && strings.Contains(f, "SiLU") {
			n++
		}
	}
	if len(s1) == 0 || n != 2*len(s1) {
		t.Fatalf("%d of %d batch norms fused each way: %q", n/2, len(s1), fused)
	}
	for _, f := range plain {
		if strings.Contains(f, "SiLU") {
			t.Fatalf("a backend without NormSiLU got a fused block: %q", f)
		}
	}
	near := func(what string, a, b []float32, tol float64) {
		t.Helper()
		var scale float64
		for _, v := range b {
			scale = max(scale, math.Abs(float64(v)))
		}
		for i := range b {
			if d := math.Abs(float64(a[i]) - float64(b[i])); d > tol*(scale+1e-6) || math.IsNaN(float64(a[i])) {
				t.Fatalf("%s[%d]: fused %v, unfused %v", what, i, a[i], b[i])
			}
		}
	}
	near("losses", l1, l0, 1e-5)
	for i := range g0 {
		near("gradient", g1[i], g0[i], 1e-3)
		near("parameter", p1[i], p0[i], 1e-4)
	}
	for i := range s0 {
		near("batch-norm statistics", s1[i], s0[i], 1e-4)
	}
}

// noKeep is the Go backend keeping no strided convolution's columns.
type noKeep struct{ *exec.GoBackend }

func (noKeep) StridedColumns() int { return 0 }

// TestStridedColumnsKept cuts the detector's convolutions into parts of
// one image and checks that the Go backend keeps its strided
// convolutions' columns (a view per part) and trains bit for bit as
// without them.
func TestStridedColumnsKept(t *testing.T) {
	spec := model.Spec{Kind: model.DetN, Channels: 3, Height: 48, Width: 48, Classes: 3}
	run := func(be exec.Backend, gb *exec.GoBackend) ([]float32, [][]float32, []string) {
		gb.SetConvScratch(20000) // one image a part: 27×576 floats of columns each
		defer be.Close()
		tr, losses := trainSteps(t, be, spec, 4, 3, 3, exec.Optim{Kind: "adam"})
		train, _ := tr.Programs()
		grads := gradsOf(t, tr)
		return losses, grads, train.Kept
	}
	a := exec.NewGoBackend()
	la, ga, kept := run(a, a)
	b := exec.NewGoBackend()
	lb, gb, none := run(noKeep{b}, b)
	strided := func(names []string) (n int) {
		for _, s := range names {
			if strings.Contains(s, "/2(") {
				n++
			}
		}
		return n
	}
	if strided(kept) != 3 || strided(none) != 0 {
		t.Fatalf("kept the columns of %q (want the three strided convolutions) and, without StridedColumns, of %q", kept, none)
	}
	for i := range lb {
		if la[i] != lb[i] {
			t.Fatalf("step %d: loss %v keeping columns, %v unfolding again", i, la[i], lb[i])
		}
	}
	for i := range gb {
		for j := range gb[i] {
			if ga[i][j] != gb[i][j] {
				t.Fatalf("gradient %d[%d]: %v keeping columns, %v unfolding again", i, j, ga[i][j], gb[i][j])
			}
		}
	}
}

// trainSteps builds spec's network at batch on be and trains it for steps
// random batches drawn from seed; it returns the trainer and the losses.
func trainSteps(t *testing.T, be exec.Backend, spec model.Spec, batch, steps int, seed int64, opt exec.Optim) (*exec.Trainer, []float32) {
	t.Helper()
	net, err := model.Build(spec, batch, 1)
	if err != nil {
		t.Fatal(err)
	}
	tg, eg := net.ExecGraphs()
	tr, err := exec.NewTrainer(be, tg, eg, opt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	var losses []float32
	for range steps {
		x, y := net.RandomBatch(rng)
		loss, _, err := tr.Step(x, y, 1e-2)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
	}
	return tr, losses
}

// gradsOf reads the last step's gradients.
func gradsOf(t *testing.T, tr *exec.Trainer) [][]float32 {
	t.Helper()
	train, _ := tr.Programs()
	grads := make([][]float32, len(train.ParamSize))
	for i, sz := range train.ParamSize {
		grads[i] = make([]float32, sz)
	}
	if err := tr.Grads(grads); err != nil {
		t.Fatal(err)
	}
	return grads
}
