package sgemm

import (
	"math/rand"
	"testing"

	"gpuwizard/trainer/exec/internal/par"
)

// BenchmarkConvShapes: the nano detector's convolution products at 128
// pixels, batch 16, one part each (forward, image and filter gradients).
func BenchmarkConvShapes(b *testing.B) {
	shapes := []struct {
		name    string
		ta, tb  bool
		m, n, k int
	}{
		{"fwd-stage2", false, false, 32, 3072, 288},
		{"fwd-stage3", false, false, 64, 1792, 576},
		{"dx-stage2", true, false, 288, 3072, 32},
		{"dx-stage3", true, false, 576, 1792, 64},
		{"fwd-down2", false, false, 32, 6144, 144},
		{"dw-stage2", false, true, 32, 288, 3072},
		{"dw-stage3", false, true, 64, 576, 1792},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			A, B, C := make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
			for _, buf := range [][]float32{A, B} {
				for i := range buf {
					buf[i] = rng.Float32()
				}
			}
			var g Gemm
			var pool par.Pool
			defer pool.Close()
			g.Run(&pool, s.ta, s.tb, s.m, s.n, s.k, A, B, C, 0)
			for b.Loop() {
				g.Run(&pool, s.ta, s.tb, s.m, s.n, s.k, A, B, C, 0)
			}
			b.ReportMetric(float64(2*s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
