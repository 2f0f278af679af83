package exec_test

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"

	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/exec/internal/cudaemu"
	"gpuwizard/trainer/optim"
)

// kcase is one kernel call on buffers of the given sizes (filled with the
// same random values on every backend); outs are the buffers compared.
type kcase struct {
	name  string
	sizes []int
	outs  []int
	init  func(i int, v []float32) // optional: shape a buffer's values
	run   func(be exec.Backend, b []exec.Buf)
}

func kernelCases() []kcase {
	ep := func(b []exec.Buf, scale, bias, mask int, inner, c int) exec.Epilogue {
		e := exec.Plain()
		e.Inner, e.C = inner, c
		if scale >= 0 {
			e.Scale = b[scale]
		}
		if bias >= 0 {
			e.Bias = b[bias]
		}
		if mask >= 0 {
			e.Mask = b[mask]
		}
		return e
	}
	pool3 := exec.Pool{N: 2, C: 3, H: 9, W: 7, OH: 4, OW: 3, KH: 3, KW: 3, SH: 2, SW: 2}
	pool2 := exec.Pool{N: 3, C: 2, H: 8, W: 6, OH: 4, OW: 3, KH: 2, KW: 2, SH: 2, SW: 2}
	pool2odd := exec.Pool{N: 2, C: 2, H: 7, W: 5, OH: 3, OW: 2, KH: 2, KW: 2, SH: 2, SW: 2}
	var cs []kcase
	cs = append(cs,
		kcase{"apply scale+bias+relu, channels of 37", []int{5 * 7 * 37, 7, 7, 5 * 7 * 37, 5 * 7 * 37}, []int{3, 4}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Apply(b[0], b[3], 5*7*37, ep(b, 1, 2, 4, 37, 7)) }},
		kcase{"apply dense bias+relu", []int{33 * 13, 13, 33 * 13, 33 * 13}, []int{2, 3}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Apply(b[0], b[2], 33*13, ep(b, -1, 1, 3, 1, 13)) }},
		kcase{"apply relu", []int{100001, 100001, 100001}, []int{1, 2}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Apply(b[0], b[1], 100001, ep(b, -1, -1, 2, 1, 1)) }},
		kcase{"swap01 bias+relu", []int{6 * 9 * 11, 6, 6 * 9 * 11, 6 * 9 * 11}, []int{2, 3}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Swap01(b[0], b[2], 6, 9, 11, ep(b, -1, 1, 3, 11, 6)) }},
		kcase{"sum rows, long", []int{3 * 50001, 3}, []int{1}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Sum(b[0], b[1], 3, 50001, 1) }},
		kcase{"sum columns, long", []int{2 * 3000 * 45, 2 * 45}, []int{1}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Sum(b[0], b[1], 2, 3000, 45) }},
		kcase{"sum columns, many", []int{70 * 5 * 300, 70 * 300}, []int{1}, nil,
			func(be exec.Backend, b []exec.Buf) { be.Sum(b[0], b[1], 70, 5, 300) }},
		kcase{"sum keep", []int{37 * 6 * 785, 6}, []int{1}, nil,
			func(be exec.Backend, b []exec.Buf) { be.SumKeep(b[0], b[1], 37, 6, 785) }},
	)
	for _, pc := range []struct {
		name string
		p    exec.Pool
	}{{"3x3 stride 2 (overlapping)", pool3}, {"2x2 tiling", pool2}, {"2x2, odd sizes", pool2odd}} {
		p := pc.p
		in, out := p.N*p.C*p.H*p.W, p.N*p.C*p.OH*p.OW
		cs = append(cs,
			kcase{"maxpool " + pc.name, []int{in, out, out}, []int{1, 2}, nil,
				func(be exec.Backend, b []exec.Buf) { be.MaxPool(b[0], b[1], b[2], p) }},
			kcase{"maxpool grad × mask " + pc.name, []int{in, out, out, out, in, in}, []int{5}, nil,
				func(be exec.Backend, b []exec.Buf) {
					be.MaxPool(b[0], b[1], b[2], p)
					be.MaxPoolGrad(b[3], b[2], b[4], b[5], p)
				}},
			kcase{"maxpool grad " + pc.name, []int{in, out, out, out, in}, []int{4}, nil,
				func(be exec.Backend, b []exec.Buf) {
					be.MaxPool(b[0], b[1], b[2], p)
					be.MaxPoolGrad(b[3], b[2], exec.NoBuf, b[4], p)
				}})
	}
	for _, g := range []struct{ m, n, k int }{{6, 25, 5000}, {16, 150, 2100}, {70, 33, 20}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float32{0, 0.5} {
					g, ta, tb, beta := g, ta, tb, beta
					cs = append(cs, kcase{fmt.Sprintf("gemm %dx%dx%d ta %v tb %v beta %v", g.m, g.n, g.k, ta, tb, beta),
						[]int{g.m * g.k, g.k * g.n, g.m * g.n}, []int{2}, nil,
						func(be exec.Backend, b []exec.Buf) { be.Gemm(ta, tb, g.m, g.n, g.k, b[0], b[1], b[2], beta) }})
				}
			}
		}
	}
	cs = append(cs, strideCases()...)
	cs = append(cs, detCases()...)
	adam := optim.NewAdam(1e-2).StepAt(3e-3, 7)
	cs = append(cs,
		kcase{"adam", []int{1000, 1000, 1000, 1000, exec.AdamScalars}, []int{0, 2, 3}, func(i int, v []float32) {
			switch i {
			case 3:
				for k := range v {
					v[k] *= v[k] // a second moment is positive
				}
			case 4:
				exec.PutAdam(v, adam)
			}
		}, func(be exec.Backend, b []exec.Buf) { be.Adam(b[0], b[1], b[2], b[3], 1000, b[4]) }},
		kcase{"sgd", []int{1000, 1000, 1000, exec.SGDScalars}, []int{0, 2}, func(i int, v []float32) {
			if i == 3 {
				exec.PutSGD(v, 0.01, 0.9, 1e-4)
			}
		}, func(be exec.Backend, b []exec.Buf) { be.SGD(b[0], b[1], b[2], 1000, b[3]) }},
	)
	return cs
}

// TestKernelsMatchFloat64 runs each kernel on edge shapes (parts of
// reductions, split-K products, overlapping pools, epilogues) on the Go
// backend (one and three threads) and the emulated CUDA backend, against
// the float64 reference.
func TestKernelsMatchFloat64(t *testing.T) {
	backends := []struct {
		name    string
		threads int
		open    func() exec.Backend
	}{
		{"go/1", 1, func() exec.Backend { return exec.NewGoBackend() }},
		{"go/3", 3, func() exec.Backend { return exec.NewGoBackend() }},
		{"gonum/3", 3, func() exec.Backend { g := exec.NewGoBackend(); g.UseGonumGEMM(); return g }},
		{"cuda-emulated", 1, func() exec.Backend {
			return exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})
		}},
	}
	for _, c := range kernelCases() {
		rng := rand.New(rand.NewSource(5))
		inputs := make([][]float32, len(c.sizes))
		for i, n := range c.sizes {
			inputs[i] = make([]float32, n)
			for k := range inputs[i] {
				inputs[i][k] = rng.Float32()*2 - 1
			}
			if c.init != nil {
				c.init(i, inputs[i])
			}
		}
		runOn := func(be exec.Backend) [][]float32 {
			var bufs []exec.Buf
			for i, n := range c.sizes {
				b, err := be.Alloc(n)
				if err != nil {
					t.Fatal(err)
				}
				be.Upload(b, inputs[i])
				bufs = append(bufs, b)
			}
			c.run(be, bufs)
			var outs [][]float32
			for _, o := range c.outs {
				d := make([]float32, c.sizes[o])
				if err := be.Download(d, bufs[o]); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				outs = append(outs, d)
			}
			return outs
		}
		want := runOn(&ref64{})
		for _, b := range backends {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(b.threads))
				be := b.open()
				defer be.Close()
				got := runOn(be)
				for k := range want {
					if e := relErr(want[k], got[k]); e > 1e-5 {
						t.Errorf("%s on %s: output %d differs from float64 (rel %.2g)", c.name, b.name, c.outs[k], e)
					}
				}
			}()
		}
	}
}

// TestApplyReLUEdgeValues: the ReLU keeps gorgonia's x ⊙ (x ≥ 0) on the
// values where branch-free tricks go wrong: ±0, ±Inf, NaN, subnormals.
func TestApplyReLUEdgeValues(t *testing.T) {
	in := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1, math.MaxFloat32, -math.MaxFloat32}
	for _, be := range []exec.Backend{exec.NewGoBackend(), exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})} {
		x, _ := be.Alloc(len(in))
		o, _ := be.Alloc(len(in))
		m, _ := be.Alloc(len(in))
		be.Upload(x, in)
		e := exec.Plain()
		e.Mask = m
		be.Apply(x, o, len(in), e)
		got, mask := make([]float32, len(in)), make([]float32, len(in))
		if err := be.Download(got, o); err != nil {
			t.Fatal(err)
		}
		if err := be.Download(mask, m); err != nil {
			t.Fatal(err)
		}
		for i, v := range in {
			wm := float32(0)
			if v >= 0 {
				wm = 1
			}
			want := v * wm
			if mask[i] != wm || math.Float32bits(got[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got[i]))) {
				t.Errorf("%s: relu(%v) = %v mask %v, want %v mask %v", be.Name(), v, got[i], mask[i], want, wm)
			}
		}
		be.Close()
	}
}

// strideCases: SiLU and its gradient, and strided convolutions' columns
// and their adjoint (stride 2 and 3, padded or not, odd sizes).
func strideCases() []kcase {
	cs := []kcase{
		{"silu", []int{70001, 70001}, []int{1}, func(i int, v []float32) {
			for k := range v {
				v[k] *= 12 // reach the tails of the sigmoid
			}
		}, func(be exec.Backend, b []exec.Buf) { be.Unary(exec.OpSiLU, b[0], b[1], 70001) }},
		{"silu grad", []int{70001, 70001, 70001}, []int{2}, func(i int, v []float32) {
			for k := range v {
				v[k] *= 12
			}
		}, func(be exec.Backend, b []exec.Buf) { be.Binary(exec.OpSiLUGrad, b[0], b[1], b[2], 70001, false, false) }},
	}
	for _, g := range []exec.Conv{
		{N: 2, C: 3, H: 9, W: 7, O: 4, K: 3, Pad: 1, Stride: 2},
		{N: 3, C: 2, H: 8, W: 8, O: 2, K: 3, Pad: 1, Stride: 2},
		{N: 1, C: 2, H: 10, W: 11, O: 2, K: 3, Pad: 0, Stride: 2},
		{N: 2, C: 2, H: 11, W: 9, O: 3, K: 5, Pad: 2, Stride: 3},
		{N: 2, C: 1, H: 6, W: 6, O: 1, K: 1, Pad: 0, Stride: 2},
	} {
		g.OH, g.OW = (g.H+2*g.Pad-g.K)/g.Stride+1, (g.W+2*g.Pad-g.K)/g.Stride+1
		in, cols := g.N*g.C*g.H*g.W, g.KDim()*g.N*g.PDim()
		name := fmt.Sprintf("%dx%d/%d pad %d on %dx%d", g.K, g.K, g.Stride, g.Pad, g.H, g.W)
		cs = append(cs,
			kcase{"im2col " + name, []int{in, cols}, []int{1}, nil,
				func(be exec.Backend, b []exec.Buf) { be.Im2col(b[0], b[1], g) }},
			kcase{"col2im " + name, []int{cols, in}, []int{1}, nil,
				func(be exec.Backend, b []exec.Buf) { be.Col2im(b[0], b[1], g) }})
	}
	return cs
}

// detTargets fills v (cells of exec.DetTargetFloats) with targets: about
// a third of the cells positive, boxes near the cell or away from it.
func detTargets(v []float32, classes int, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	for q := 0; q < len(v)/exec.DetTargetFloats; q++ {
		t := v[q*exec.DetTargetFloats : (q+1)*exec.DetTargetFloats]
		clear(t)
		t[1] = 0.1
		if rng.Intn(3) > 0 {
			continue
		}
		x1, y1 := rng.Float32()*6-4, rng.Float32()*6-4
		t[0], t[2], t[3] = 1, 0.1, float32(rng.Intn(classes))
		t[4], t[5], t[6], t[7] = x1, y1, x1+0.2+rng.Float32()*5, y1+0.2+rng.Float32()*5
	}
}

// detCases: the detection loss's terms and gradient, against package
// detect's float64 reference.
func detCases() []kcase {
	var cs []kcase
	for _, d := range []exec.Det{
		{N: 2, Classes: 3, H: 5, W: 7, GIoU: 5, L1: 1, Cls: 1, Obj: 1},
		{N: 3, Classes: 1, H: 4, W: 4, GIoU: 2, L1: 0.5, Cls: 0.7, Obj: 1.5},
	} {
		head, cells := d.Cells()*d.Channels(), d.Cells()
		init := func(i int, v []float32) {
			if i == 1 {
				detTargets(v, d.Classes, int64(d.N))
			}
			if i == 2 && len(v) == 3 {
				v[0], v[1], v[2] = 0.7, -1.3, 2
			}
		}
		name := fmt.Sprintf("%d classes %dx%d", d.Classes, d.H, d.W)
		cs = append(cs,
			kcase{"det loss " + name, []int{head, cells * exec.DetTargetFloats, cells * 3}, []int{2}, init,
				func(be exec.Backend, b []exec.Buf) { be.DetLoss(b[0], b[1], b[2], d) }},
			kcase{"det loss grad " + name, []int{head, cells * exec.DetTargetFloats, 3, head}, []int{3}, init,
				func(be exec.Backend, b []exec.Buf) { be.DetLossGrad(b[0], b[1], b[2], b[3], d) }})
	}
	return cs
}

// TestDetLayoutMatchesDetect: the kernels read the targets package detect
// writes, and clamp as its reference does.
func TestDetLayoutMatchesDetect(t *testing.T) {
	if exec.DetTargetFloats != detect.TargetFloats || exec.DetLogClamp != detect.LogClamp {
		t.Fatalf("exec reads %d target floats clamped at %d; detect writes %d clamped at %d",
			exec.DetTargetFloats, exec.DetLogClamp, detect.TargetFloats, detect.LogClamp)
	}
}

// TestSiLUExpAccuracy: the Go backend's exp behind SiLU is within 3e-7
// of float64's over float32's range, and keeps SiLU's limits.
func TestSiLUExpAccuracy(t *testing.T) {
	worst := 0.0
	for x0 := -87.0; x0 < 88.5; x0 += 0.0137 {
		x := float64(float32(x0))
		got := float64(exec.SiLU(float32(-x))) // x/(1+e^x) at -x
		want := -x / (1 + math.Exp(x))
		if e := math.Abs(got-want) / max(math.Abs(want), 1e-30); want != 0 && e > worst {
			worst = e
		}
	}
	if worst > 1e-6 {
		t.Fatalf("SiLU differs from float64 by up to %.3g relative", worst)
	}
	for x, want := range map[float32]float32{-200: 0, 200: 200, 0: 0} {
		if got := exec.SiLU(x); got != want {
			t.Errorf("SiLU(%v) = %v, want %v", x, got, want)
		}
	}
	if nan := exec.SiLU(float32(math.NaN())); nan == nan {
		t.Errorf("SiLU(NaN) = %v", nan)
	}
	t.Logf("largest relative difference from float64: %.2g", worst)
}
