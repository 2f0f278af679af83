package exec

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"gpuwizard/assets"
	"gpuwizard/trainer/optim"
)

// Errors of the CUDA backend.
var (
	// ErrNoCUDA: the driver library, a device or the kernels could not be
	// used; the message says which and why.
	ErrNoCUDA = errors.New("CUDA unavailable")
	// ErrOutOfMemory: a device allocation failed (the trainer halves the
	// batch and says so).
	ErrOutOfMemory = errors.New("out of GPU memory")
)

// CUDAInfo describes the device a CUDA backend runs on.
type CUDAInfo struct {
	Ordinal      int
	Name         string
	Major, Minor int    // compute capability
	Memory       uint64 // bytes
	Driver       int    // CUDA driver API version, e.g. 13000
	GEMM         string // "cuBLAS" or "own SGEMM kernel"
}

// DriverString is the driver's CUDA version as "13.0".
func (i CUDAInfo) DriverString() string {
	return fmt.Sprintf("%d.%d", i.Driver/1000, i.Driver%1000/10)
}

// String is a one-line description for events.
func (i CUDAInfo) String() string {
	return fmt.Sprintf("%s (compute capability %d.%d, %.0f GiB, CUDA driver %s, GEMM by %s)",
		i.Name, i.Major, i.Minor, float64(i.Memory)/(1<<30), i.DriverString(), i.GEMM)
}

func kernelNames() []string {
	return []string{"gw_fill", "gw_binary", "gw_unary", "gw_repeat", "gw_sum_axis",
		"gw_sum_rows", "gw_softmax", "gw_softmax_grad", "gw_maxpool", "gw_maxpool_grad", "gw_bn_train",
		"gw_bn_eval", "gw_bn_grad", "gw_im2col", "gw_col2im", "gw_swap01", "gw_adam", "gw_sgd", "gw_sgemm"}
}

// Driver is the part of the CUDA driver API the backend launches through:
// libcuda on a GPU, the CPU emulator of package cudaemu in tests.
type Driver interface {
	Alloc(bytes int) (uint64, error)
	Free(p uint64)
	HtoD(dst uint64, src []float32) error
	DtoH(dst []float32, src uint64) error
	// Launch runs a kernel of kernels.cu by name; arguments are 8-byte
	// slots (ints and floats in the low bytes).
	Launch(name string, gx, gy, bx, by int, args []uint64) error
}

// libDriver is Driver over the loaded libcuda and the embedded PTX.
type libDriver struct {
	lib *cudaLib
	fn  map[string]unsafe.Pointer
}

func (d *libDriver) Alloc(bytes int) (uint64, error)      { return d.lib.alloc(bytes) }
func (d *libDriver) Free(p uint64)                        { d.lib.free(p) }
func (d *libDriver) HtoD(dst uint64, src []float32) error { return d.lib.htod(dst, src) }
func (d *libDriver) DtoH(dst []float32, src uint64) error { return d.lib.dtoh(dst, src) }
func (d *libDriver) Launch(name string, gx, gy, bx, by int, args []uint64) error {
	f, ok := d.fn[name]
	if !ok {
		return fmt.Errorf("kernel %s is not in the PTX", name)
	}
	return d.lib.launch(f, gx, gy, bx, by, args)
}

// CUDABackend runs the kernels on an NVIDIA GPU through the driver API,
// loaded at run time: the binary links no CUDA library.
type CUDABackend struct {
	drv    Driver
	lib    *cudaLib // nil on an emulated device
	info   CUDAInfo
	ptr    []uint64
	cublas bool
	err    error
	args   []uint64 // launch arguments, reused
}

// NewCUDABackendOn runs the backend on another driver: the tests use the
// CPU emulator, so the kernels and this file's launch code are checked
// without a GPU. cuBLAS is not used there.
func NewCUDABackendOn(d Driver, info CUDAInfo) *CUDABackend {
	info.GEMM = "own SGEMM kernel"
	return &CUDABackend{drv: d, info: info}
}

// OpenCUDA loads libcuda.so.1, selects device ordinal (its primary
// context), loads the embedded PTX and, when found, cuBLAS.
func OpenCUDA(ordinal int) (*CUDABackend, error) {
	lib, err := openLib()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoCUDA, err)
	}
	fail := func(err error) (*CUDABackend, error) {
		lib.close()
		return nil, fmt.Errorf("%w: %w", ErrNoCUDA, err)
	}
	if err := lib.init(); err != nil {
		return fail(err)
	}
	info := CUDAInfo{Ordinal: ordinal}
	if info.Driver, err = lib.driverVersion(); err != nil {
		return fail(err)
	}
	n, err := lib.count()
	if err != nil {
		return fail(err)
	}
	if ordinal < 0 || ordinal >= n {
		return fail(fmt.Errorf("device cuda:%d does not exist: CUDA sees %d device(s) (check CUDA_VISIBLE_DEVICES)", ordinal, n))
	}
	if info.Name, info.Major, info.Minor, info.Memory, err = lib.device(ordinal); err != nil {
		return fail(err)
	}
	fn, err := lib.module(assets.KernelsPTX, kernelNames())
	if err != nil {
		return fail(fmt.Errorf("loading gpuwizard's kernels (PTX for compute capability 6.0, ISA 7.8; a driver for CUDA 11.8 or newer is needed): %w", err))
	}
	b := &CUDABackend{drv: &libDriver{lib: lib, fn: fn}, lib: lib, info: info}
	b.cublas = lib.blas()
	b.info.GEMM = "own SGEMM kernel"
	if b.cublas {
		b.info.GEMM = "cuBLAS"
	}
	return b, nil
}

// Info describes the device.
func (b *CUDABackend) Info() CUDAInfo { return b.info }

// Name implements Backend.
func (b *CUDABackend) Name() string { return fmt.Sprintf("cuda:%d", b.info.Ordinal) }

// MemInfo returns the device's free and total memory in bytes.
func (b *CUDABackend) MemInfo() (free, total uint64, err error) {
	if b.lib == nil {
		return 0, 0, fmt.Errorf("%w: an emulated device has no memory figures", ErrNoCUDA)
	}
	return b.lib.memInfo()
}

func (b *CUDABackend) setErr(err error) {
	if err != nil && b.err == nil {
		var ce *cuError
		if errors.As(err, &ce) && ce.code == 2 { // CUDA_ERROR_OUT_OF_MEMORY
			err = fmt.Errorf("%w: %w", ErrOutOfMemory, err)
		}
		b.err = err
	}
}

// Alloc implements Backend.
func (b *CUDABackend) Alloc(n int) (Buf, error) {
	if b.err != nil {
		return NoBuf, b.err
	}
	p, err := b.drv.Alloc(4 * max(n, 1))
	if err != nil {
		var ce *cuError
		if errors.As(err, &ce) && ce.code == 2 {
			return NoBuf, fmt.Errorf("%w: %d MiB more: %w", ErrOutOfMemory, (4*n)>>20, err)
		}
		return NoBuf, err
	}
	b.ptr = append(b.ptr, p)
	buf := Buf(len(b.ptr) - 1)
	b.Fill(buf, n, 0)
	return buf, b.err
}

// Close implements Backend.
func (b *CUDABackend) Close() error {
	if b.drv == nil {
		return nil
	}
	for _, p := range b.ptr {
		b.drv.Free(p)
	}
	if b.lib != nil {
		b.lib.close()
	}
	b.drv, b.lib, b.ptr = nil, nil, nil
	return nil
}

// Upload implements Backend.
func (b *CUDABackend) Upload(dst Buf, src []float32) {
	if b.err == nil {
		b.setErr(b.drv.HtoD(b.ptr[dst], src))
	}
}

// Download implements Backend (it waits for the queued kernels).
func (b *CUDABackend) Download(dst []float32, src Buf) error {
	if b.err == nil {
		b.setErr(b.drv.DtoH(dst, b.ptr[src]))
	}
	return b.err
}

// Err implements Backend.
func (b *CUDABackend) Err() error { return b.err }

// Sync waits for every queued kernel.
func (b *CUDABackend) Sync() error {
	if b.err == nil && b.lib != nil {
		b.setErr(b.lib.sync())
	}
	return b.err
}

func (b *CUDABackend) p(x Buf) uint64 {
	if x == NoBuf {
		return 0
	}
	return b.ptr[x]
}
func iv(v int) uint64     { return uint64(uint32(int32(v))) }
func fv(v float32) uint64 { return uint64(math.Float32bits(v)) }
func bv(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// run launches a grid-stride kernel over n elements.
func (b *CUDABackend) run(name string, n int, args ...uint64) {
	b.launch(name, min(max((n+255)/256, 1), 8192), 1, 256, 1, args...)
}

func (b *CUDABackend) launch(name string, gx, gy, bx, by int, args ...uint64) {
	if b.err != nil {
		return
	}
	// The driver gets a reused copy: the variadic array then stays on the
	// stack, and a step of ~80 launches allocates nothing.
	b.args = append(b.args[:0], args...)
	b.setErr(b.drv.Launch(name, gx, gy, bx, by, b.args))
}

// Fill implements Backend.
func (b *CUDABackend) Fill(dst Buf, n int, v float32) { b.run("gw_fill", n, b.p(dst), iv(n), fv(v)) }

// Binary implements Backend.
func (b *CUDABackend) Binary(op BinOp, x, y, out Buf, n int, xs, ys bool) {
	b.run("gw_binary", n, iv(int(op)), b.p(x), b.p(y), b.p(out), iv(n), bv(xs), bv(ys))
}

// Unary implements Backend.
func (b *CUDABackend) Unary(op UnOp, x, out Buf, n int) {
	b.run("gw_unary", n, iv(int(op)), b.p(x), b.p(out), iv(n))
}

// Gemm implements Backend: cuBLAS when present, else the own kernel.
func (b *CUDABackend) Gemm(ta, tb bool, m, n, k int, x, y, c Buf, beta float32) {
	if b.err != nil {
		return
	}
	if b.cublas && b.lib != nil {
		b.setErr(b.lib.sgemm(ta, tb, m, n, k, b.p(x), b.p(y), b.p(c), beta))
		return
	}
	b.launch("gw_sgemm", (n+63)/64, (m+63)/64, 16, 16, bv(ta), bv(tb), iv(m), iv(n), iv(k), b.p(x), b.p(y), b.p(c), fv(beta))
}

// Repeat implements Backend.
func (b *CUDABackend) Repeat(in, out Buf, outer, rep, inner int) {
	b.run("gw_repeat", outer*rep*inner, b.p(in), b.p(out), iv(outer), iv(rep), iv(inner))
}

// Sum implements Backend.
func (b *CUDABackend) Sum(in, out Buf, outer, red, inner int) {
	// Long rows get a block of 256 threads each; short ones (a batch-norm
	// broadcast's Σ over 16 or 49 positions) one thread per sum.
	if inner == 1 && red >= 2048 {
		b.launch("gw_sum_rows", min(outer, 65535), 1, 256, 1, b.p(in), b.p(out), iv(outer), iv(red))
		return
	}
	b.run("gw_sum_axis", outer*inner, b.p(in), b.p(out), iv(outer), iv(red), iv(inner))
}

// Softmax implements Backend.
func (b *CUDABackend) Softmax(in, out Buf, rows, cols int, log bool) {
	b.run("gw_softmax", rows, b.p(in), b.p(out), iv(rows), iv(cols), bv(log))
}

// SoftmaxGrad implements Backend.
func (b *CUDABackend) SoftmaxGrad(y, g, out Buf, rows, cols int, log bool) {
	b.run("gw_softmax_grad", rows, b.p(y), b.p(g), b.p(out), iv(rows), iv(cols), bv(log))
}

// MaxPool implements Backend.
func (b *CUDABackend) MaxPool(in, out, idx Buf, p Pool) {
	b.run("gw_maxpool", p.N*p.C*p.OH*p.OW, b.p(in), b.p(out), b.p(idx), iv(p.N*p.C), iv(p.H), iv(p.W),
		iv(p.OH), iv(p.OW), iv(p.KH), iv(p.KW), iv(p.SH), iv(p.SW))
}

// MaxPoolGrad implements Backend.
func (b *CUDABackend) MaxPoolGrad(g, idx, out Buf, p Pool) {
	b.Fill(out, p.N*p.C*p.H*p.W, 0)
	b.run("gw_maxpool_grad", p.N*p.C*p.OH*p.OW, b.p(g), b.p(idx), b.p(out), iv(p.N*p.C), iv(p.H), iv(p.W),
		iv(p.OH), iv(p.OW), iv(p.KW), iv(p.SH), iv(p.SW))
}

// BatchNorm implements Backend.
func (b *CUDABackend) BatchNorm(x, out, save, running Buf, p Norm, training bool) {
	if training {
		b.launch("gw_bn_train", p.C, 1, 256, 1, b.p(x), b.p(out), b.p(save), b.p(running), iv(p.N), iv(p.C), iv(p.HW),
			fv(p.Momentum), fv(p.Epsilon))
		return
	}
	b.run("gw_bn_eval", p.N*p.C*p.HW, b.p(x), b.p(out), b.p(running), iv(p.N), iv(p.C), iv(p.HW), fv(p.Epsilon))
}

// BatchNormGrad implements Backend.
func (b *CUDABackend) BatchNormGrad(x, g, out, save Buf, p Norm) {
	b.launch("gw_bn_grad", p.C, 1, 256, 1, b.p(x), b.p(g), b.p(out), b.p(save), iv(p.N), iv(p.C), iv(p.HW))
}

// Im2col implements Backend.
func (b *CUDABackend) Im2col(x, cols Buf, p Conv) {
	b.run("gw_im2col", p.KDim()*p.N*p.PDim(), b.p(x), b.p(cols), iv(p.N), iv(p.C), iv(p.H), iv(p.W), iv(p.K),
		iv(p.Pad), iv(p.OH), iv(p.OW))
}

// Col2im implements Backend.
func (b *CUDABackend) Col2im(cols, x Buf, p Conv) {
	b.run("gw_col2im", p.N*p.C*p.H*p.W, b.p(cols), b.p(x), iv(p.N), iv(p.C), iv(p.H), iv(p.W), iv(p.K),
		iv(p.Pad), iv(p.OH), iv(p.OW))
}

// Swap01 implements Backend.
func (b *CUDABackend) Swap01(in, out Buf, x, y, z int, bias Buf) {
	b.run("gw_swap01", x*y*z, b.p(in), b.p(out), iv(x), iv(y), iv(z), b.p(bias), bv(bias != NoBuf))
}

// Adam implements Backend.
func (b *CUDABackend) Adam(p, g, m, v Buf, n int, a optim.AdamStep) {
	b.run("gw_adam", n, b.p(p), b.p(g), b.p(m), b.p(v), iv(n), fv(a.Beta1), fv(a.Beta2), fv(a.Step), fv(a.Eps), fv(a.Decay))
}

// SGD implements Backend.
func (b *CUDABackend) SGD(p, g, vel Buf, n int, lr, momentum, decay float32) {
	b.run("gw_sgd", n, b.p(p), b.p(g), b.p(vel), iv(n), fv(lr), fv(momentum), fv(decay))
}

// KernelNames lists the kernels the backend launches (for tests).
func KernelNames() []string { return kernelNames() }

// UseOwnGEMM makes the backend use its own SGEMM kernel even when cuBLAS
// was found (tests and benchmarks).
func (b *CUDABackend) UseOwnGEMM() {
	b.cublas = false
	b.info.GEMM = "own SGEMM kernel"
}
