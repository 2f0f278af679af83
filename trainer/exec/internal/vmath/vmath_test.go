package vmath

import (
	"math"
	"math/rand"
	"testing"
)

func silu64(x float64) float64 { return x / (1 + math.Exp(-x)) }

func siluGrad64(x, g float64) float64 {
	s := 1 / (1 + math.Exp(-x))
	return g * s * (1 + x*(1-s))
}

// inputs are values across SiLU's range and its edges: both zeros, the
// clamps of Exp and past them, the largest floats, the infinities, NaN,
// subnormals, then random values of every scale.
func inputs(n int) []float32 {
	edge := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 87.33, -87.33, 88.72, -88.72, 90, -90, 104, -104,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-30, -1e-30, 1.2785, -1.2785, 20, -20}
	rng := rand.New(rand.NewSource(1))
	out := append([]float32(nil), edge...)
	for len(out) < n {
		out = append(out, float32(rng.NormFloat64()*math.Pow(10, float64(rng.Intn(5))-2)))
	}
	return out
}

// close says whether got is want within tol relative (or tol absolute
// near zero), NaN matching NaN.
func close(got float32, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(float64(got))
	}
	if math.IsInf(want, 0) {
		return float64(got) == want
	}
	return math.Abs(float64(got)-want) <= tol*math.Max(math.Abs(want), 1e-30)+1e-37
}

// TestSiLU: SiLU and its gradient, through the vector code and the Go
// tail, against float64 on every input, at every length from 0 to 40
// and offset (so every split between the two paths is met).
func TestSiLU(t *testing.T) {
	xs := inputs(4096)
	gs := inputs(4096)
	for i := range gs {
		gs[i] = float32(math.Max(-100, math.Min(100, float64(gs[i])))) // finite gradients
		if math.IsNaN(float64(gs[i])) {
			gs[i] = 0.5
		}
	}
	check := func(lo, hi int) {
		o := make([]float32, hi-lo)
		SiLU(o, xs[lo:hi])
		for i, v := range o {
			x := float64(xs[lo+i])
			if want := silu64(x); !close(v, want, 3e-7) && !(math.IsInf(x, -1) && v == 0 || math.IsInf(x, 1) && math.IsNaN(float64(v))) {
				t.Fatalf("SiLU(%g) = %g, want %g (slice %d:%d)", x, v, want, lo, hi)
			}
		}
		SiLUGrad(o, xs[lo:hi], gs[lo:hi])
		for i, v := range o {
			x, g := float64(xs[lo+i]), float64(gs[lo+i])
			want := siluGrad64(x, g)
			if math.IsInf(x, 0) || math.Abs(x) == math.MaxFloat32 {
				continue // ±∞·0 forms, not met in training
			}
			// Near x = -1.2785 the factor 1 + x·(1 − σ) cancels: the error
			// is bounded by float32 rounding of its terms, about ε·|g|·(1 + |x|).
			if math.Abs(float64(v)-want) > 1e-6*math.Abs(want)+3e-7*math.Abs(g)*(1+math.Abs(x))+1e-37 {
				t.Fatalf("SiLUGrad(%g, %g) = %g, want %g (slice %d:%d)", x, g, v, want, lo, hi)
			}
		}
	}
	for n := 0; n <= 40; n++ {
		for off := 0; off < 9; off++ {
			check(off, off+n)
		}
	}
	check(0, len(xs))
}

// TestVectorMatchesGo: lane for lane, the assembly gives what the Go code
// gives, within 2 ulp (fused multiply-adds round once where Go rounds
// twice); NaN stays NaN.
func TestVectorMatchesGo(t *testing.T) {
	if !haveAVX2() {
		t.Log("no AVX2/FMA on this CPU: SiLU runs the Go code only (TestSiLU covers it)")
		return
	}
	xs := inputs(1 << 14)
	xs = xs[:len(xs)&^7]
	gs := make([]float32, len(xs))
	for i := range gs {
		gs[i] = float32(i%7) - 3
	}
	a, b := make([]float32, len(xs)), make([]float32, len(xs))
	siluAVX2(&a[0], &xs[0], len(xs))
	siluGo(b, xs)
	ulps(t, "SiLU", xs, a, b, nil)
	siluGradAVX2(&a[0], &xs[0], &gs[0], len(xs))
	siluGradGo(b, xs, gs)
	ulps(t, "SiLUGrad", xs, a, b, gs)
}

// ulps fails when a and b differ by more than 4 ulp; for the gradient
// (gs set) also allowed is the rounding of its cancelling factor near
// x = -1.2785, about ε·|g|·(1 + |x|).
func ulps(t *testing.T, name string, xs, a, b, gs []float32) {
	t.Helper()
	for i := range a {
		if gs != nil && math.Abs(float64(a[i])-float64(b[i])) <= 3e-7*math.Abs(float64(gs[i]))*(1+math.Abs(float64(xs[i]))) {
			continue
		}
		if math.IsNaN(float64(a[i])) || math.IsNaN(float64(b[i])) {
			if math.IsNaN(float64(a[i])) != math.IsNaN(float64(b[i])) {
				t.Fatalf("%s(%g): vector %g, Go %g", name, xs[i], a[i], b[i])
			}
			continue
		}
		d := int64(math.Float32bits(a[i])) - int64(math.Float32bits(b[i]))
		if (a[i] < 0) != (b[i] < 0) && a[i] != 0 && b[i] != 0 || d > 4 || d < -4 {
			t.Fatalf("%s(%g): vector %g, Go %g (%d ulp)", name, xs[i], a[i], b[i], d)
		}
	}
}

func benchSiLU(b *testing.B, f func(o, a []float32)) {
	xs := inputs(1 << 16)
	o := make([]float32, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		f(o, xs)
	}
}

// BenchmarkSiLU and BenchmarkSiLUGo: the vector code against the Go loop
// on the same 64k floats (a det-n layer at 128 px, batch 4).
func BenchmarkSiLU(b *testing.B)   { benchSiLU(b, SiLU) }
func BenchmarkSiLUGo(b *testing.B) { benchSiLU(b, siluGo) }

func benchGrad(b *testing.B, f func(o, x, g []float32)) {
	xs := inputs(1 << 16)
	o := make([]float32, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		f(o, xs, xs)
	}
}

func BenchmarkSiLUGrad(b *testing.B)   { benchGrad(b, SiLUGrad) }
func BenchmarkSiLUGradGo(b *testing.B) { benchGrad(b, siluGradGo) }
