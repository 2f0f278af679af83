package sgemm

import (
	"math/rand"
	"testing"
	"time"

	"gpuwizard/trainer/exec/internal/par"
)

// convShapes: the nano detector's convolution products at 128 pixels,
// batch 16, one part each (forward, image and filter gradients).
var convShapes = []struct {
	name    string
	ta, tb  bool
	m, n, k int
}{
	{"fwd-stage2", false, false, 32, 3072, 288},
	{"fwd-stage3", false, false, 64, 1792, 576},
	{"dx-stage2", true, false, 288, 3072, 32},
	{"dx-stage3", true, false, 576, 1792, 64},
	{"fwd-down2", false, false, 32, 6144, 144},
	{"fwd-first", false, false, 16, 32768, 27},
	{"dw-stage2", false, true, 32, 288, 3072},
	{"dw-stage3", false, true, 64, 576, 1792},
	{"dw-down2", false, true, 32, 144, 6144},
	{"dw-first", false, true, 16, 27, 32768},
	{"fwd-stage3-320", false, false, 64, 1600, 576},
	{"fwd-stage2-320", false, false, 32, 6400, 288},
	{"dx-stage3-320", true, false, 576, 1600, 64},
	{"dw-stage2-320", false, true, 32, 288, 6400},
	{"dw-stage3-320", false, true, 64, 576, 1600},
}

// operands returns random A (m×k) and B (k×n) and C (m×n).
func operands(m, n, k int) (A, B, C []float32) {
	rng := rand.New(rand.NewSource(1))
	A, B, C = make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, buf := range [][]float32{A, B} {
		for i := range buf {
			buf[i] = rng.Float32()
		}
	}
	return A, B, C
}

// BenchmarkConvShapes: the nano detector's convolution products at 128
// pixels, batch 16, one part each (forward, image and filter gradients).
func BenchmarkConvShapes(b *testing.B) {
	for _, s := range convShapes {
		b.Run(s.name, func(b *testing.B) {
			A, B, C := operands(s.m, s.n, s.k)
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

// BenchmarkPanels6: the same products with 6-row panels (kernel6x16)
// against 4-row panels alone (kernel4x16), the two alternated call by call
// in one process so that the machine's swings hit both alike; x6_vs_4 is
// the ratio of the 4-row time to the 6-row time (above 1: faster).
func BenchmarkPanels6(b *testing.B) {
	for _, s := range convShapes {
		b.Run(s.name, func(b *testing.B) {
			A, B, C := operands(s.m, s.n, s.k)
			var g6, g4 Gemm
			g4.UseOnly4(true)
			var pool par.Pool
			defer pool.Close()
			var t6, t4 time.Duration
			i := 0
			for b.Loop() {
				for _, g := range [2]*Gemm{&g6, &g4} {
					if i%2 == 1 {
						g = map[*Gemm]*Gemm{&g6: &g4, &g4: &g6}[g]
					}
					t0 := time.Now()
					g.Run(&pool, s.ta, s.tb, s.m, s.n, s.k, A, B, C, 0)
					if g == &g6 {
						t6 += time.Since(t0)
					} else {
						t4 += time.Since(t0)
					}
				}
				i++
			}
			b.ReportMetric(t4.Seconds()/t6.Seconds(), "x6_vs_4")
			b.ReportMetric(float64(2*s.m*s.n*s.k)*float64(b.N)/t6.Seconds()/1e9, "GFLOP/s")
		})
	}
}
