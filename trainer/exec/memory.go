package exec

import (
	"fmt"
	"slices"
)

// MemoryReporter is implemented by a backend that knows its device's
// memory (CUDA): free and total bytes.
type MemoryReporter interface {
	MemInfo() (free, total uint64, err error)
}

// Releaser is implemented by a backend that can free every buffer and keep
// the device open: after running out of memory the trainer plans again
// from nothing.
type Releaser interface {
	FreeAll() error
}

// OverheadReporter is implemented by a backend that allocates device
// memory of its own beyond the planned buffers (CUDA: cuBLAS's workspace,
// the reductions' scratch space), in bytes.
type OverheadReporter interface {
	MemoryOverhead() int64
}

// ConvScratcher is implemented by a backend that chooses how much a
// convolution may unfold at once: the planner runs a convolution on parts
// of the batch whose columns (KDim × images·P) and forward product
// (O × images·P) each fit ConvScratch floats, one image at least.
type ConvScratcher interface {
	ConvScratch() int
}

// ColumnKeeper is a backend on which unfolding a strided convolution's
// images costs more than keeping its columns from the forward pass to the
// filter gradient: StridedColumns is how many floats of such columns it
// keeps, all convolutions together (in graph order, whole convolutions).
type ColumnKeeper interface {
	StridedColumns() int
}

// DefaultConvScratch is the columns' budget, in floats, of a backend that
// does not choose (4 MiB: a part's columns stay in the CPU's caches
// between the unfolding and the GEMM).
const DefaultConvScratch = 1 << 20

func convScratch(be Backend) int {
	if c, ok := be.(ConvScratcher); ok && c.ConvScratch() > 0 {
		return c.ConvScratch()
	}
	return DefaultConvScratch
}

// MemoryNeed is the device memory, in bytes, that NewTrainer would
// allocate on be for these graphs and optimiser: every buffer the planner
// makes (parameters, gradients, optimiser state, inputs, activations, the
// convolutions' scratch at be's ConvScratch), counted by planning on a
// backend that only counts. The backend's own overhead (OverheadReporter)
// is not in it.
func MemoryNeed(be Backend, train, eval Graph, opt Optim) (int64, error) {
	s := sizer{scratch: convScratch(be)}
	if _, err := NewTrainer(&s, train, eval, opt); err != nil {
		return 0, fmt.Errorf("%w: sizing the plan: %w", ErrExec, err)
	}
	return 4 * s.floats, nil
}

// sizer is a Backend that counts the floats allocated and runs nothing.
type sizer struct {
	floats  int64
	bufs    int
	scratch int
}

func (s *sizer) ConvScratch() int { return s.scratch }

// spareBuf is a buffer a program leaves free between its runs.
type spareBuf struct {
	b Buf
	n int // floats
}

// take returns n floats: the smallest spare buffer (another program's,
// Options.reuse) that holds them, or a new one.
func (p *planner) take(n int) Buf {
	best := -1
	for i, s := range p.spare {
		if s.n >= n && (best < 0 || s.n < p.spare[best].n) {
			best = i
		}
	}
	if best < 0 {
		return p.alloc(n)
	}
	s := p.spare[best]
	p.spare = slices.Delete(p.spare, best, best+1)
	if s.n == n {
		return s.b
	}
	return p.view(s.b, 0, n)
}

// leaveSpare lists, in the program, the buffers free between its runs:
// those of the plan's free lists (every activation and gradient not kept)
// and the convolutions' scratch. A program planned with Options.reuse
// takes them before allocating: the evaluation program runs in the
// training program's memory (the two never run at once: one queue).
func (p *planner) leaveSpare() {
	var sp []spareBuf
	for n, l := range p.free {
		for _, b := range l {
			sp = append(sp, spareBuf{b, n})
		}
	}
	sp = append(sp, p.scratchBufs...)
	sp = append(sp, p.spare...) // what was taken from another program and not used
	slices.SortFunc(sp, func(a, b spareBuf) int {
		if a.n != b.n {
			return a.n - b.n
		}
		return int(a.b) - int(b.b)
	})
	p.prog.spare = sp
}

var _ Backend = (*sizer)(nil)

func (s *sizer) Name() string { return "sizer" }
func (s *sizer) Alloc(n int) (Buf, error) {
	s.floats += int64(max(n, 1))
	s.bufs++
	return Buf(s.bufs - 1), nil
}
func (s *sizer) View(parent Buf, off, n int) (Buf, error) {
	s.bufs++
	return Buf(s.bufs - 1), nil
}
func (s *sizer) Close() error                                           { return nil }
func (s *sizer) Upload(Buf, []float32)                                  {}
func (s *sizer) Download([]float32, Buf) error                          { return nil }
func (s *sizer) Err() error                                             { return nil }
func (s *sizer) Fill(Buf, int, float32)                                 {}
func (s *sizer) Binary(BinOp, Buf, Buf, Buf, int, bool, bool)           {}
func (s *sizer) Unary(UnOp, Buf, Buf, int)                              {}
func (s *sizer) Apply(Buf, Buf, int, Epilogue)                          {}
func (s *sizer) Gemm(bool, bool, int, int, int, Buf, Buf, Buf, float32) {}
func (s *sizer) Repeat(Buf, Buf, int, int, int)                         {}
func (s *sizer) Sum(Buf, Buf, int, int, int)                            {}
func (s *sizer) SumKeep(Buf, Buf, int, int, int)                        {}
func (s *sizer) Softmax(Buf, Buf, int, int, bool)                       {}
func (s *sizer) SoftmaxGrad(Buf, Buf, Buf, int, int, bool)              {}
func (s *sizer) MaxPool(Buf, Buf, Buf, Pool)                            {}
func (s *sizer) MaxPoolGrad(Buf, Buf, Buf, Buf, Pool)                   {}
func (s *sizer) BatchNorm(Buf, Buf, Buf, Buf, Norm, bool)               {}
func (s *sizer) BatchNormGrad(Buf, Buf, Buf, Buf, Norm)                 {}
func (s *sizer) Im2col(Buf, Buf, Conv)                                  {}
func (s *sizer) Col2im(Buf, Buf, Conv)                                  {}
func (s *sizer) Swap01(Buf, Buf, int, int, int, Epilogue)               {}
func (s *sizer) Adam(Buf, Buf, Buf, Buf, int, Buf)                      {}
func (s *sizer) SGD(Buf, Buf, Buf, int, Buf)                            {}
func (s *sizer) DetLoss(Buf, Buf, Buf, Det)                             {}
func (s *sizer) DetLossGrad(Buf, Buf, Buf, Buf, Det)                    {}
