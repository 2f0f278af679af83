package exec_test

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/optim"
)

// ref64 is a float64 backend: the same kernels as the Go backend written
// as plainly as possible and computed in float64, so the tests can tell
// which of two float32 backends that disagree is nearer the truth, and by
// how much float32 arithmetic can be expected to miss it.
type ref64 struct {
	bufs [][]float64
}

var _ exec.Backend = (*ref64)(nil)

func (r *ref64) Name() string { return "ref64" }

func (r *ref64) Alloc(n int) (exec.Buf, error) {
	r.bufs = append(r.bufs, make([]float64, n))
	return exec.Buf(len(r.bufs) - 1), nil
}

func (r *ref64) View(parent exec.Buf, off, n int) (exec.Buf, error) {
	r.bufs = append(r.bufs, r.bufs[parent][off:off+n:off+n])
	return exec.Buf(len(r.bufs) - 1), nil
}

func (r *ref64) Close() error { r.bufs = nil; return nil }

func (r *ref64) Upload(dst exec.Buf, src []float32) {
	for i, v := range src {
		r.bufs[dst][i] = float64(v)
	}
}

func (r *ref64) Download(dst []float32, src exec.Buf) error {
	for i := range dst {
		dst[i] = float32(r.bufs[src][i])
	}
	return nil
}

// Data64 is a buffer's float64 values.
func (r *ref64) Data64(b exec.Buf) []float64 { return r.bufs[b] }

func (r *ref64) Err() error { return nil }

func (r *ref64) Fill(dst exec.Buf, n int, v float32) {
	for i := range r.bufs[dst][:n] {
		r.bufs[dst][i] = float64(v)
	}
}

func bin64(op exec.BinOp, x, y float64) float64 {
	b := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case exec.OpAdd:
		return x + y
	case exec.OpSub:
		return x - y
	case exec.OpMul:
		return x * y
	case exec.OpDiv:
		return x / y
	case exec.OpGE:
		return b(x >= y)
	case exec.OpGT:
		return b(x > y)
	case exec.OpLE:
		return b(x <= y)
	case exec.OpLT:
		return b(x < y)
	case exec.OpSiLUGrad:
		sg := 1 / (1 + math.Exp(-x))
		return y * sg * (1 + x*(1-sg))
	}
	return math.NaN()
}

func (r *ref64) Binary(op exec.BinOp, a, b, out exec.Buf, n int, as, bs bool) {
	A, B, O := r.bufs[a], r.bufs[b], r.bufs[out]
	for i := 0; i < n; i++ {
		x, y := A[0], B[0]
		if !as {
			x = A[i]
		}
		if !bs {
			y = B[i]
		}
		O[i] = bin64(op, x, y)
	}
}

func (r *ref64) Unary(op exec.UnOp, a, out exec.Buf, n int) {
	A, O := r.bufs[a], r.bufs[out]
	for i := 0; i < n; i++ {
		x := A[i]
		switch op {
		case exec.OpNeg:
			x = -x
		case exec.OpExp:
			x = math.Exp(x)
		case exec.OpLog:
			x = math.Log(x)
		case exec.OpSqrt:
			x = math.Sqrt(x)
		case exec.OpSquare:
			x = x * x
		case exec.OpAbs:
			x = math.Abs(x)
		case exec.OpSiLU:
			x = x / (1 + math.Exp(-x))
		}
		O[i] = x
	}
}

// Gemm is gonum's float64 GEMM (blas64), checked against naive loops by
// gonum's own tests.
func (r *ref64) Gemm(ta, tb bool, m, n, k int, a, b, c exec.Buf, beta float32) {
	A := blas64.General{Rows: m, Cols: k, Stride: k, Data: r.bufs[a]}
	if ta {
		A = blas64.General{Rows: k, Cols: m, Stride: m, Data: r.bufs[a]}
	}
	B := blas64.General{Rows: k, Cols: n, Stride: n, Data: r.bufs[b]}
	if tb {
		B = blas64.General{Rows: n, Cols: k, Stride: k, Data: r.bufs[b]}
	}
	C := blas64.General{Rows: m, Cols: n, Stride: n, Data: r.bufs[c]}
	opA, opB := blas.NoTrans, blas.NoTrans
	if ta {
		opA = blas.Trans
	}
	if tb {
		opB = blas.Trans
	}
	blas64.Gemm(opA, opB, 1, A, B, float64(beta), C)
}

func (r *ref64) Repeat(in, out exec.Buf, outer, rep, inner int) {
	I, O := r.bufs[in], r.bufs[out]
	for o := 0; o < outer; o++ {
		for k := 0; k < rep; k++ {
			copy(O[(o*rep+k)*inner:][:inner], I[o*inner:][:inner])
		}
	}
}

func (r *ref64) Sum(in, out exec.Buf, outer, red, inner int) {
	I, O := r.bufs[in], r.bufs[out]
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			var s float64
			for j := 0; j < red; j++ {
				s += I[(o*red+j)*inner+k]
			}
			O[o*inner+k] = s
		}
	}
}

func (r *ref64) Softmax(in, out exec.Buf, rows, cols int, log bool) {
	I, O := r.bufs[in], r.bufs[out]
	for i := 0; i < rows; i++ {
		x, y := I[i*cols:][:cols], O[i*cols:][:cols]
		mx := x[0]
		for _, v := range x {
			mx = math.Max(mx, v)
		}
		var s float64
		for _, v := range x {
			s += math.Exp(v - mx)
		}
		for j, v := range x {
			if log {
				y[j] = v - mx - math.Log(s)
			} else {
				y[j] = math.Exp(v-mx) / s
			}
		}
	}
}

func (r *ref64) SoftmaxGrad(y, g, out exec.Buf, rows, cols int, log bool) {
	Y, G, O := r.bufs[y], r.bufs[g], r.bufs[out]
	for i := 0; i < rows; i++ {
		yy, gg, dx := Y[i*cols:][:cols], G[i*cols:][:cols], O[i*cols:][:cols]
		var s float64
		for j := range gg {
			if log {
				s += gg[j]
			} else {
				s += yy[j] * gg[j]
			}
		}
		for j := range dx {
			if log {
				dx[j] = gg[j] - math.Exp(yy[j])*s
			} else {
				dx[j] = (gg[j] - s) * yy[j]
			}
		}
	}
}

func (r *ref64) MaxPool(in, out, idx exec.Buf, p exec.Pool) {
	I, O, X := r.bufs[in], r.bufs[out], r.bufs[idx]
	for pl := 0; pl < p.N*p.C; pl++ {
		for oy := 0; oy < p.OH; oy++ {
			for ox := 0; ox < p.OW; ox++ {
				best, at := math.Inf(-1), -1
				for ky := 0; ky < p.KH && oy*p.SH+ky < p.H; ky++ {
					for kx := 0; kx < p.KW && ox*p.SW+kx < p.W; kx++ {
						if v := I[pl*p.H*p.W+(oy*p.SH+ky)*p.W+ox*p.SW+kx]; v > best {
							best, at = v, ky*p.KW+kx
						}
					}
				}
				o := pl*p.OH*p.OW + oy*p.OW + ox
				O[o], X[o] = best, float64(at)
			}
		}
	}
}

func (r *ref64) MaxPoolGrad(g, idx, mask, out exec.Buf, p exec.Pool) {
	G, X, O := r.bufs[g], r.bufs[idx], r.bufs[out]
	defer func() {
		if mask != exec.NoBuf {
			for i := range O[:p.N*p.C*p.H*p.W] {
				O[i] *= r.bufs[mask][i]
			}
		}
	}()
	clear(O[:p.N*p.C*p.H*p.W])
	for pl := 0; pl < p.N*p.C; pl++ {
		for oy := 0; oy < p.OH; oy++ {
			for ox := 0; ox < p.OW; ox++ {
				o := pl*p.OH*p.OW + oy*p.OW + ox
				at := int(X[o])
				if at < 0 {
					continue
				}
				O[pl*p.H*p.W+(oy*p.SH+at/p.KW)*p.W+ox*p.SW+at%p.KW] += G[o]
			}
		}
	}
}

func (r *ref64) BatchNorm(x, out, save, running exec.Buf, p exec.Norm, training bool) {
	X, O, S, R := r.bufs[x], r.bufs[out], r.bufs[save], r.bufs[running]
	n := float64(p.N * p.HW)
	for c := 0; c < p.C; c++ {
		at := func(b, k int) int { return (b*p.C+c)*p.HW + k }
		var mean, inv float64
		if training {
			var s, ss float64
			for b := 0; b < p.N; b++ {
				for k := 0; k < p.HW; k++ {
					s += X[at(b, k)]
				}
			}
			mean = s / n
			for b := 0; b < p.N; b++ {
				for k := 0; k < p.HW; k++ {
					d := X[at(b, k)] - mean
					ss += d * d
				}
			}
			inv = 1 / math.Sqrt(ss/n+float64(p.Epsilon))
			S[c], S[p.C+c] = mean, inv
			m := float64(p.Momentum)
			R[c] = m*mean + (1-m)*R[c]
			R[p.C+c] = m*ss/(n-1) + (1-m)*R[p.C+c]
		} else {
			mean, inv = R[c], 1/math.Sqrt(R[p.C+c]+float64(p.Epsilon))
		}
		for b := 0; b < p.N; b++ {
			for k := 0; k < p.HW; k++ {
				O[at(b, k)] = (X[at(b, k)] - mean) * inv
			}
		}
	}
}

func (r *ref64) BatchNormGrad(x, g, out, save exec.Buf, p exec.Norm) {
	X, G, O, S := r.bufs[x], r.bufs[g], r.bufs[out], r.bufs[save]
	n := float64(p.N * p.HW)
	for c := 0; c < p.C; c++ {
		at := func(b, k int) int { return (b*p.C+c)*p.HW + k }
		mean, inv := S[c], S[p.C+c]
		var sum, dot float64
		for b := 0; b < p.N; b++ {
			for k := 0; k < p.HW; k++ {
				sum += G[at(b, k)]
				dot += (X[at(b, k)] - mean) * G[at(b, k)]
			}
		}
		for b := 0; b < p.N; b++ {
			for k := 0; k < p.HW; k++ {
				O[at(b, k)] = (G[at(b, k)] - (X[at(b, k)]-mean)*dot*inv*inv/n - sum/n) * inv
			}
		}
	}
}

func (r *ref64) Im2col(x, cols exec.Buf, p exec.Conv) {
	X, C := r.bufs[x], r.bufs[cols]
	NP := p.N * p.PDim()
	for c := 0; c < p.C; c++ {
		for ky := 0; ky < p.K; ky++ {
			for kx := 0; kx < p.K; kx++ {
				row := (c*p.K+ky)*p.K + kx
				for b := 0; b < p.N; b++ {
					for oy := 0; oy < p.OH; oy++ {
						for ox := 0; ox < p.OW; ox++ {
							iy, ix := oy*p.S()+ky-p.Pad, ox*p.S()+kx-p.Pad
							v := 0.0
							if iy >= 0 && iy < p.H && ix >= 0 && ix < p.W {
								v = X[((b*p.C+c)*p.H+iy)*p.W+ix]
							}
							C[row*NP+b*p.PDim()+oy*p.OW+ox] = v
						}
					}
				}
			}
		}
	}
}

func (r *ref64) Col2im(cols, x exec.Buf, p exec.Conv) {
	C, X := r.bufs[cols], r.bufs[x]
	NP := p.N * p.PDim()
	clear(X[:p.N*p.C*p.H*p.W])
	for c := 0; c < p.C; c++ {
		for ky := 0; ky < p.K; ky++ {
			for kx := 0; kx < p.K; kx++ {
				row := (c*p.K+ky)*p.K + kx
				for b := 0; b < p.N; b++ {
					for oy := 0; oy < p.OH; oy++ {
						for ox := 0; ox < p.OW; ox++ {
							iy, ix := oy*p.S()+ky-p.Pad, ox*p.S()+kx-p.Pad
							if iy >= 0 && iy < p.H && ix >= 0 && ix < p.W {
								X[((b*p.C+c)*p.H+iy)*p.W+ix] += C[row*NP+b*p.PDim()+oy*p.OW+ox]
							}
						}
					}
				}
			}
		}
	}
}

func (r *ref64) Swap01(in, out exec.Buf, a, b, c int, e exec.Epilogue) {
	I, O := r.bufs[in], r.bufs[out]
	for i := 0; i < a; i++ {
		for j := 0; j < b; j++ {
			for k := 0; k < c; k++ {
				o := (j*a+i)*c + k
				O[o] = r.epi(I[(i*b+j)*c+k], o, e)
			}
		}
	}
}

// epi applies e to the value v written at index i.
func (r *ref64) epi(v float64, i int, e exec.Epilogue) float64 {
	ch := (i / max(e.Inner, 1)) % max(e.C, 1)
	if e.Scale != exec.NoBuf {
		v *= r.bufs[e.Scale][ch]
	}
	if e.Bias != exec.NoBuf {
		v += r.bufs[e.Bias][ch]
	}
	if e.Mask != exec.NoBuf {
		m := 0.0
		if v >= 0 {
			m = 1
		}
		r.bufs[e.Mask][i] = m
		v *= m
	}
	return v
}

func (r *ref64) Apply(in, out exec.Buf, n int, e exec.Epilogue) {
	for i := 0; i < n; i++ {
		r.bufs[out][i] = r.epi(r.bufs[in][i], i, e)
	}
}

func (r *ref64) SumKeep(in, out exec.Buf, outer, keep, inner int) {
	I, O := r.bufs[in], r.bufs[out]
	for c := 0; c < keep; c++ {
		var s float64
		for o := 0; o < outer; o++ {
			for k := 0; k < inner; k++ {
				s += I[(o*keep+c)*inner+k]
			}
		}
		O[c] = s
	}
}

func (r *ref64) Adam(p, g, m, v exec.Buf, n int, s exec.Buf) {
	P, G, M, V, S := r.bufs[p], r.bufs[g], r.bufs[m], r.bufs[v], r.bufs[s]
	a := optim.AdamStep{Beta1: float32(S[0]), Beta2: float32(S[1]), Step: float32(S[2]), Eps: float32(S[3]), Decay: float32(S[4])}
	adam64(P[:n], G[:n], M[:n], V[:n], a)
}

// adam64 is optim.AdamUpdate in float64.
func adam64(p, g, m, v []float64, a optim.AdamStep) {
	b1, b2 := float64(a.Beta1), float64(a.Beta2)
	for i := range p {
		m[i] = b1*m[i] + (1-b1)*g[i]
		v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
		p[i] = p[i]*float64(a.Decay) - float64(a.Step)*m[i]/(math.Sqrt(v[i])+float64(a.Eps))
	}
}

func (r *ref64) SGD(p, g, vel exec.Buf, n int, s exec.Buf) {
	S := r.bufs[s]
	sgd64(r.bufs[p][:n], r.bufs[g][:n], r.bufs[vel][:n], S[0], S[1], S[2])
}

// sgd64 is optim.SGDUpdate in float64.
func sgd64(p, g, vel []float64, lr, momentum, decay float64) {
	for i := range p {
		vel[i] = momentum*vel[i] + g[i] + decay*p[i]
		p[i] -= lr * vel[i]
	}
}

func detOf(d exec.Det) (detect.Head, detect.Gains) {
	return detect.Head{N: d.N, Classes: d.Classes, H: d.H, W: d.W},
		detect.Gains{GIoU: float64(d.GIoU), L1: float64(d.L1), Cls: float64(d.Cls), Obj: float64(d.Obj)}
}

// DetLoss is package detect's float64 reference.
func (r *ref64) DetLoss(head, tgt, terms exec.Buf, d exec.Det) {
	h, g := detOf(d)
	copy(r.bufs[terms], detect.LossTerms64(r.bufs[head][:h.Cells()*h.Channels()], r.bufs[tgt], h, g))
}

func (r *ref64) DetLossGrad(head, tgt, gr, out exec.Buf, d exec.Det) {
	h, g := detOf(d)
	G := r.bufs[gr]
	copy(r.bufs[out], detect.LossGrad64(r.bufs[head][:h.Cells()*h.Channels()], r.bufs[tgt], [3]float64{G[0], G[1], G[2]}, h, g))
}
