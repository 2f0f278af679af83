package exec_test

import (
	"math/rand"
	"runtime"
	"testing"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

// TestStepAllocatesNothing: a training step on the Go backend allocates
// nothing, with one thread and with several (the pool's hand-offs
// included), for every model and both optimisers.
func TestStepAllocatesNothing(t *testing.T) {
	for _, threads := range []int{1, 4} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		for _, name := range modelNames() {
			for _, opt := range []string{"adam", "sgd"} {
				net, err := model.Build(specs()[name], 8, 1)
				if err != nil {
					t.Fatal(err)
				}
				tg, eg := net.ExecGraphs()
				be := exec.NewGoBackend()
				tr, err := exec.NewTrainer(be, tg, eg, exec.Optim{Kind: opt, Momentum: 0.9})
				if err != nil {
					t.Fatal(err)
				}
				x, y := net.RandomBatch(rand.New(rand.NewSource(1)))
				step := func() {
					if _, _, err := tr.Step(x, y, 1e-3); err != nil {
						t.Fatal(err)
					}
				}
				step() // the first step sizes the GEMM's packing space
				if n := testing.AllocsPerRun(10, step); n != 0 {
					t.Errorf("%s %s, %d threads: %v allocations per step", name, opt, threads, n)
				}
				if n := testing.AllocsPerRun(10, func() {
					if _, err := tr.Predict(x); err != nil {
						t.Fatal(err)
					}
				}); n != 0 {
					t.Errorf("%s, %d threads: %v allocations per evaluation", name, threads, n)
				}
				be.Close()
			}
		}
	}
}
