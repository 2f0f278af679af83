package vmath

import (
	"math"
	"math/rand"
	"testing"
)

// statInputs are finite values of mixed scales (a channel's activations).
func statInputs(n int, seed int64) []float32 {
	rng := rand.New(rand.NewSource(seed))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64()*math.Pow(10, float64(rng.Intn(4))-1) + 0.5)
	}
	return out
}

// near says whether got is want within 1e-12 relative to the sum of the
// terms' magnitudes (float64 sums in another order).
func near(got, want, scale float64) bool { return math.Abs(got-want) <= 1e-12*scale+1e-300 }

// TestStats: the sums, the normalisation and its gradient through the
// vector code and the Go tail, at every length to 70 and offset (every
// split between the two paths), and on a long slice, against the Go
// arithmetic written out here: the sums within float64 rounding, the
// float32 results bit for bit.
func TestStats(t *testing.T) {
	x, g := statInputs(4200, 1), statInputs(4200, 2)
	const mean, k, gm, inv = 0.37, -0.021, 0.013, 1.7
	check := func(lo, hi int) {
		xs, gs := x[lo:hi], g[lo:hi]
		var s, sq, sg, dt, scale, scaleSq, scaleDot float64
		for i, v := range xs {
			s += float64(v)
			d := float64(v - mean)
			sq += d * d
			sg += float64(gs[i])
			dt += d * float64(gs[i])
			scale += math.Abs(float64(v))
			scaleSq += d * d
			scaleDot += math.Abs(d * float64(gs[i]))
		}
		if got := Sum64(xs); !near(got, s, scale) {
			t.Fatalf("Sum64 of [%d:%d] = %v, want %v", lo, hi, got, s)
		}
		if got := SqDev64(xs, mean); !near(got, sq, scaleSq) {
			t.Fatalf("SqDev64 of [%d:%d] = %v, want %v", lo, hi, got, sq)
		}
		gotS, gotD := SumDot64(gs, xs, mean)
		if !near(gotS, sg, scale+1) || !near(gotD, dt, scaleDot) {
			t.Fatalf("SumDot64 of [%d:%d] = %v, %v, want %v, %v", lo, hi, gotS, gotD, sg, dt)
		}
		o := make([]float32, hi-lo)
		Normalize(o, xs, mean, inv)
		for i, v := range xs {
			if want := (v - mean) * inv; o[i] != want {
				t.Fatalf("Normalize of [%d:%d] at %d = %v, want %v", lo, hi, i, o[i], want)
			}
		}
		copy(o, gs)
		Binary(OpAdd, o, o, xs) // in place, as col2im adds
		for i, v := range xs {
			if want := gs[i] + v; o[i] != want {
				t.Fatalf("Binary in place of [%d:%d] at %d = %v, want %v", lo, hi, i, o[i], want)
			}
		}
		for _, op := range []Op{OpAdd, OpSub, OpMul} {
			Binary(op, o, xs, gs)
			for i, v := range xs {
				want := v + gs[i]
				if op == OpSub {
					want = v - gs[i]
				} else if op == OpMul {
					want = v * gs[i]
				}
				if o[i] != want {
					t.Fatalf("Binary %d of [%d:%d] at %d = %v, want %v", op, lo, hi, i, o[i], want)
				}
			}
		}
		ScaleShift(o, xs, k, gm)
		for i, v := range xs {
			if want := float32(v*k) + gm; o[i] != want {
				t.Fatalf("ScaleShift of [%d:%d] at %d = %v, want %v", lo, hi, i, o[i], want)
			}
		}
		NormGrad(o, gs, xs, mean, k, gm, inv)
		for i, v := range xs {
			if want := (gs[i] - float32((v-mean)*k) - gm) * inv; o[i] != want {
				t.Fatalf("NormGrad of [%d:%d] at %d = %v, want %v", lo, hi, i, o[i], want)
			}
		}
	}
	for n := 0; n <= 70; n++ {
		for off := 0; off < 9; off++ {
			check(off, off+n)
		}
	}
	check(3, 4200)
}

// TestSumsKeepSmallTerms: a float32 sum of a million values drifts; the
// float64 ones keep every term (1 + a million times 2^-24 would stay 1 in
// float32).
func TestSumsKeepSmallTerms(t *testing.T) {
	v := make([]float32, 1<<20+5)
	v[0] = 1
	for i := 1; i < len(v); i++ {
		v[i] = 1.0 / (1 << 24)
	}
	want := 1 + float64(len(v)-1)/(1<<24)
	if got := Sum64(v); got != want {
		t.Fatalf("Sum64 = %v, want %v", got, want)
	}
	if got, _ := SumDot64(v, v, 0); got != want {
		t.Fatalf("SumDot64's sum = %v, want %v", got, want)
	}
}

// TestStride2: Gather2 and ScatterAdd2 at every length to 40, on slices
// holding exactly the floats they may touch (one past is a sentinel), odd
// floats of ScatterAdd2's destination kept bit for bit (−0 included).
func TestStride2(t *testing.T) {
	x := statInputs(200, 3)
	for n := 0; n <= 40; n++ {
		for off := 0; off < 3; off++ {
			m := max(2*n-1, 0)
			src := append(append([]float32(nil), x[off:off+m]...), 12345) // a sentinel past the floats read
			dst := make([]float32, n+1)
			dst[n] = -7
			Gather2(dst[:n], src[:m])
			for i := 0; i < n; i++ {
				if dst[i] != src[2*i] {
					t.Fatalf("Gather2 n %d off %d: dst[%d] = %v, want %v", n, off, i, dst[i], src[2*i])
				}
			}
			if dst[n] != -7 {
				t.Fatalf("Gather2 n %d: wrote past the end", n)
			}
			acc := append(append([]float32(nil), x[off+1:off+1+m]...), -7)
			for i := 1; i < m; i += 2 {
				acc[i] = float32(math.Copysign(0, -1)) // odd floats: −0, to be kept
			}
			want := append([]float32(nil), acc...)
			for i := 0; i < n; i++ {
				want[2*i] += x[100+i]
			}
			ScatterAdd2(acc[:m], x[100:100+n])
			for i := range want {
				if math.Float32bits(acc[i]) != math.Float32bits(want[i]) {
					t.Fatalf("ScatterAdd2 n %d off %d: dst[%d] = %v, want %v", n, off, i, acc[i], want[i])
				}
			}
		}
	}
}
