package exec_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand"
	"os"
	"strings"
	"testing"

	"gpuwizard/assets"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/exec/internal/cudaemu"
	"gpuwizard/trainer/model"
)

// TestPTXMatchesSource: the embedded PTX was generated from the committed
// kernels.cu (make kernels records its hash) and has every kernel the
// backend launches.
func TestPTXMatchesSource(t *testing.T) {
	src, err := os.ReadFile("../../assets/kernels/kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../assets/kernels/kernels.cu.sha256")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if hex.EncodeToString(sum[:]) != strings.TrimSpace(string(want)) {
		t.Fatal("kernels.cu changed since kernels.ptx was generated: run make kernels")
	}
	for _, name := range exec.KernelNames() {
		if !strings.Contains(assets.KernelsPTX, ".entry "+name+"(") {
			t.Errorf("kernel %s is not in the PTX", name)
		}
	}
}

// TestCUDABackend runs on every machine: without a usable GPU, OpenCUDA
// must fail cleanly with ErrNoCUDA and say why; with one, the CUDA backend
// must match the Go backend on a training step of each model (loss,
// logits and every gradient within 1e-4 relative; the CNN's gradients
// within 1e-2), for cuBLAS and for the own SGEMM kernel.
func TestCUDABackend(t *testing.T) {
	cb, err := exec.OpenCUDA(0)
	if err != nil {
		if !errors.Is(err, exec.ErrNoCUDA) || len(err.Error()) < len(exec.ErrNoCUDA.Error())+5 {
			t.Fatalf("OpenCUDA without a GPU: want ErrNoCUDA with a reason, got %v", err)
		}
		t.Logf("no CUDA here, as expected on a machine without a GPU: %v", err)
		if _, err := exec.OpenCUDA(-1); !errors.Is(err, exec.ErrNoCUDA) {
			t.Fatalf("cuda:-1: %v", err)
		}
		return
	}
	defer cb.Close()
	t.Logf("device: %v", cb.Info())
	for _, ownGemm := range []bool{false, true} {
		for name, spec := range specs() {
			for _, batch := range []int{8, 64} {
				b, err := exec.OpenCUDA(0)
				if err != nil {
					t.Fatal(err)
				}
				opt := "adam"
				if name == "mlp" {
					opt = "sgd"
				}
				compareBackends(t, name, spec, batch, b, ownGemm, opt)
			}
		}
	}
}

// TestCUDABackendEmulated runs the CUDA backend on the CPU emulator of its
// kernels (package cudaemu: kernels.cu compiled as C), against the Go
// backend, on every machine: the kernels' arithmetic and indexing, the
// argument packing and the launch shapes are checked without a GPU. Only
// the driver, the PTX JIT and cuBLAS are left to TestCUDABackend on a GPU.
func TestCUDABackendEmulated(t *testing.T) {
	for name, spec := range specs() {
		opt := "adam"
		if name == "mlp" {
			opt = "sgd"
		}
		cb := exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})
		compareBackends(t, name, spec, 4, cb, true, opt)
	}
}

// compareBackends trains spec on the Go backend and on cb from the same
// parameters, batches and optimiser state, step by step: loss, logits,
// gradients, the parameters after the optimiser's update (opt), and at the
// end the evaluation logits.
func compareBackends(t *testing.T, name string, spec model.Spec, batch int, cb *exec.CUDABackend, ownGemm bool, opt string) {
	t.Helper()
	defer cb.Close()
	if ownGemm {
		cb.UseOwnGEMM()
	}
	netA, _ := model.Build(spec, batch, 3)
	netB, _ := model.Build(spec, batch, 3)
	ta, ea := netA.ExecGraphs()
	tb, eb := netB.ExecGraphs()
	o := exec.Optim{Kind: opt, Momentum: 0.9, WeightDecay: 1e-4}
	ref, err := exec.NewTrainer(exec.NewGoBackend(), ta, ea, o)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := exec.NewTrainer(cb, tb, eb, o)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(9))
	params := make([][]float32, len(netA.Params))
	g1 := make([][]float32, len(netA.Params))
	g2 := make([][]float32, len(netA.Params))
	for i, p := range netA.Params {
		params[i] = make([]float32, len(p.Data))
		g1[i] = make([]float32, len(p.Data))
		g2[i] = make([]float32, len(p.Data))
	}
	got := make([][]float32, len(netA.Params))
	for i, p := range netA.Params {
		got[i] = make([]float32, len(p.Data))
	}
	// sync starts the GPU from the CPU's parameters, statistics and
	// optimiser state.
	sync := func(step int) {
		if err := ref.ReadParams(params); err != nil {
			t.Fatal(err)
		}
		if err := netB.SetStates(netA.States()); err != nil {
			t.Fatal(err)
		}
		if err := gpu.WriteParams(params); err != nil {
			t.Fatal(err)
		}
		if step > 0 {
			st, err := ref.State()
			if err != nil {
				t.Fatal(err)
			}
			if err := gpu.SetState(st); err != nil {
				t.Fatal(err)
			}
		}
	}
	for step := 0; step < 3; step++ {
		sync(step)
		x, y := netA.RandomBatch(rng)
		l1, z1, err := ref.Forward(x, y)
		if err != nil {
			t.Fatal(err)
		}
		l2, z2, err := gpu.Forward(x, y)
		if err != nil {
			t.Fatalf("%s batch %d: %v", name, batch, err)
		}
		if e := relErr([]float32{l1}, []float32{l2}); e > 1e-4 {
			t.Fatalf("%s batch %d own gemm %v step %d: loss %v on CUDA, %v on the CPU (rel %.2g)", name, batch, ownGemm, step, l2, l1, e)
		}
		if e := relErr(z1, z2); e > 1e-4 {
			t.Fatalf("%s batch %d own gemm %v step %d: logits differ (rel %.2g)", name, batch, ownGemm, step, e)
		}
		if err := ref.Grads(g1); err != nil {
			t.Fatal(err)
		}
		if err := gpu.Grads(g2); err != nil {
			t.Fatal(err)
		}
		// As in TestKernelGEMMMatchesGonum: batch norm's backward cancels,
		// so the CNN's gradients are held to 1e-2, the others to 1e-4.
		gradTol := 1e-4
		if name == "cnn" {
			gradTol = 1e-2
		}
		for i, p := range netA.Params {
			if e := relErr(g1[i], g2[i]); e > gradTol {
				t.Fatalf("%s batch %d own gemm %v step %d: gradient of %s differs (rel %.2g)", name, batch, ownGemm, step, p.Name, e)
			}
		}
		if err := ref.Update(1e-3); err != nil {
			t.Fatal(err)
		}
		if err := gpu.Update(1e-3); err != nil {
			t.Fatal(err)
		}
		if err := ref.ReadParams(params); err != nil {
			t.Fatal(err)
		}
		if err := gpu.ReadParams(got); err != nil {
			t.Fatal(err)
		}
		for i, p := range netA.Params {
			if e := relErr(params[i], got[i]); e > 1e-4 {
				t.Fatalf("%s batch %d %s step %d: %s after the update differs (rel %.2g)", name, batch, opt, step, p.Name, e)
			}
		}
	}
	sync(3)
	x, _ := netA.RandomBatch(rng)
	p1, _ := ref.Predict(x)
	p1 = append([]float32(nil), p1...)
	p2, err := gpu.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(p1, p2); e > 1e-4 {
		t.Fatalf("%s batch %d: evaluation differs (rel %.2g)", name, batch, e)
	}
}
