package exec

import "fmt"

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

// MemoryNeed is the device memory, in bytes, that NewTrainer would
// allocate for these graphs and optimiser: every buffer the planner makes
// (parameters, gradients, optimiser state, inputs, activations, the
// convolutions' columns, workspace), counted by planning on a backend that
// only counts. The backend's own overhead (OverheadReporter) is not in it.
func MemoryNeed(train, eval Graph, opt Optim) (int64, error) {
	var s sizer
	if _, err := NewTrainer(&s, train, eval, opt); err != nil {
		return 0, fmt.Errorf("%w: sizing the plan: %w", ErrExec, err)
	}
	return 4 * s.floats, nil
}

// sizer is a Backend that counts the floats allocated and runs nothing.
type sizer struct {
	floats int64
	bufs   int
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
