package sgemm

import (
	"math"
	"math/rand"
	"testing"

	"gpuwizard/trainer/exec/internal/par"
)

// TestGemmMatchesNaive checks the kernel against a float64 triple loop for
// every transpose, edge sizes and beta (where the CPU has AVX2 and FMA; the
// exec package tests the gonum path everywhere).
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	sizes := [][3]int{{1, 1, 1}, {4, 16, 8}, {5, 17, 3}, {6, 50, 25}, {64, 120, 400}, {16, 150, 333}, {3, 2, 0}, {130, 33, 70},
		{11, 40, 30}, {32, 33, 9}, {6, 25, 2049}, {16, 150, 1024}, {1, 1, 256}, {7, 8, 263}} // the last four: A·Bᵀ as dot products (k ≥ dotK)
	if !Available() {
		t.Log("no AVX2/FMA on this CPU: the kernel is not used here")
		return
	}
	var pool par.Pool
	defer pool.Close()
	for _, only4 := range []bool{false, true} { // 6-row panels, and the 4-row reference
		var g Gemm
		g.UseOnly4(only4)
		for _, s := range sizes {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, beta := range []float32{0, 1, 0.5} {
						m, n, k := s[0], s[1], s[2]
						A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
						for _, buf := range [][]float32{A, B, C} {
							for i := range buf {
								buf[i] = rng.Float32()*2 - 1
							}
						}
						if beta == 0 { // C's old values must not matter, not even NaN
							for i := range C {
								C[i] = float32(math.NaN())
							}
						}
						want := make([]float64, m*n)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								var sum float64
								for kk := 0; kk < k; kk++ {
									av := A[i*k+kk]
									if ta {
										av = A[kk*m+i]
									}
									bv := B[kk*n+j]
									if tb {
										bv = B[j*k+kk]
									}
									sum += float64(av) * float64(bv)
								}
								want[i*n+j] = sum
								if beta != 0 {
									want[i*n+j] += float64(beta) * float64(C[i*n+j])
								}
							}
						}
						g.Run(&pool, ta, tb, m, n, k, A, B, C, beta)
						for i, w := range want {
							if d := math.Abs(float64(C[i]) - w); d > 1e-4*(1+math.Abs(w))*math.Sqrt(float64(k+1)) {
								t.Fatalf("%dx%dx%d ta %v tb %v beta %v (4-row panels only %v): C[%d] = %v, want %v", m, n, k, ta, tb, beta, only4, i, C[i], w)
							}
						}
					}
				}
			}
		}
	}
}
