package exec_test

import (
	"math/rand"
	"os"
	"strconv"
	"testing"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

func benchExec(b *testing.B, spec model.Spec, batch int) {
	net, err := model.Build(spec, batch, 1)
	if err != nil {
		b.Fatal(err)
	}
	tg, eg := net.ExecGraphs()
	tr, err := exec.NewTrainer(exec.NewGoBackend(), tg, eg, exec.Optim{Kind: "adam"})
	if err != nil {
		b.Fatal(err)
	}
	x, y := net.RandomBatch(rand.New(rand.NewSource(1)))
	if _, _, err := tr.Step(x, y, 1e-3); err != nil { // sizes the packing space
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := tr.Step(x, y, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "img/s")
}

// The Go backend at batch 64 (compare with model's BenchmarkLeNet64, the
// tape machine, and with bench/train-speed.sh for PyTorch).
func BenchmarkExecLeNet64(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.LeNet, Channels: 1, Height: 28, Width: 28, Classes: 10}, 64)
}

func BenchmarkExecMLP64(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.MLP, Channels: 1, Height: 28, Width: 28, Classes: 10}, 64)
}

// The nano detector on the built-in set's 128-pixel grey canvases, batch
// 32 (compare with bench/detector.sh's PyTorch twin).
func BenchmarkExecDetN128(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.DetN, Channels: 1, Height: 128, Width: 128, Classes: 10}, 32)
}

// The nano detector on 320-pixel colour images, batch 16 (the default
// canvas; bench/det-speed.sh's workload).
func BenchmarkExecDetN320(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.DetN, Channels: 3, Height: 320, Width: 320, Classes: 10}, 16)
}

// The nano detector's default run on the built-in set: 128-pixel grey
// canvases, batch 16.
func BenchmarkExecDetN128B16(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.DetN, Channels: 1, Height: 128, Width: 128, Classes: 10}, 16)
}

func BenchmarkExecCNN64(b *testing.B) {
	benchExec(b, model.Spec{Kind: model.CNN, Channels: 1, Height: 28, Width: 28, Classes: 10}, 64)
}

// BenchmarkCUDASgemm measures the GEMM throughput on a GPU (cuBLAS and the
// own kernel) for a large square product and for LeNet-5's largest
// training GEMMs at batch 256. GW_PEAK_TFLOPS (the GPU's FP32 peak, e.g. 67
// for an H100 SXM) adds the fraction of peak reached. Skipped without CUDA.
func BenchmarkCUDASgemm(b *testing.B) {
	cb, err := exec.OpenCUDA(0)
	if err != nil {
		b.Skip(err)
	}
	defer cb.Close()
	peak, _ := strconv.ParseFloat(os.Getenv("GW_PEAK_TFLOPS"), 64)
	shapes := []struct {
		name    string
		m, n, k int
		ta, tb  bool
	}{
		{"square4096", 4096, 4096, 4096, false, false},
		{"lenet_conv2_fwd_bs256", 16, 256 * 100, 150, false, false},
		{"lenet_conv2_dW_bs256", 16, 150, 256 * 100, false, true},
		{"lenet_fc3_dW_bs256", 400, 120, 256, true, false},
	}
	for _, own := range []bool{false, true} {
		for _, s := range shapes {
			name := "cublas/" + s.name
			if own {
				name = "own/" + s.name
			}
			b.Run(name, func(b *testing.B) {
				if own {
					cb.UseOwnGEMM()
				}
				x, _ := cb.Alloc(s.m * s.k)
				y, _ := cb.Alloc(s.k * s.n)
				z, _ := cb.Alloc(s.m * s.n)
				for b.Loop() {
					cb.Gemm(s.ta, s.tb, s.m, s.n, s.k, x, y, z, 0)
					if err := cb.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				tflops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N) / b.Elapsed().Seconds() / 1e12
				b.ReportMetric(tflops, "TFLOPS")
				if peak > 0 {
					b.ReportMetric(tflops/peak, "of_peak")
				}
			})
		}
	}
}
