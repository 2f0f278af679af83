package exec

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"gpuwizard/assets"
	"gpuwizard/internal/plural"
)

// Errors of the CUDA backend.
var (
	// ErrNoCUDA: the driver library, a device or the kernels could not be
	// used; the message says which and why.
	ErrNoCUDA = errors.New("CUDA unavailable")
	// ErrNoDriver: the CUDA driver library (libcuda.so.1, nvcuda.dll)
	// cannot be loaded: no NVIDIA driver, or a build without cgo. OpenCUDA
	// wraps it in ErrNoCUDA.
	ErrNoDriver = errors.New("no CUDA driver")
	// ErrOutOfMemory: a device allocation failed (the trainer halves the
	// batch and says so).
	ErrOutOfMemory = errors.New("out of GPU memory")
)

// noDriver is ErrNoDriver for library lib, with the loader's reason.
func noDriver(lib, why string) error {
	return fmt.Errorf("%w: %s could not be loaded (%s); gpuwizard doctor says why", ErrNoDriver, lib, why)
}

// cuError names a driver error.
type cuError struct {
	call string
	code int
	name string
}

func (e *cuError) Error() string { return fmt.Sprintf("%s: %s (%d)", e.call, e.name, e.code) }

// CUDAInfo describes the device a CUDA backend runs on.
type CUDAInfo struct {
	Ordinal      int
	Name         string
	Major, Minor int    // compute capability
	Memory       uint64 // bytes
	Driver       int    // CUDA driver API version, e.g. 13000
	GEMM         string // "cuBLAS" or "own SGEMM kernel"
	SMs          int    // multiprocessors (0: unknown), to size reductions' grids
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
	return []string{"gw_fill", "gw_binary", "gw_unary", "gw_apply", "gw_repeat", "gw_reduce_rows",
		"gw_reduce_cols", "gw_reduce_final", "gw_softmax", "gw_softmax_grad", "gw_maxpool", "gw_maxpool_grad",
		"gw_bn_train", "gw_bn_eval", "gw_bn_grad", "gw_im2col", "gw_col2im", "gw_swap01", "gw_adam", "gw_sgd",
		"gw_sgemm", "gw_det_loss", "gw_det_loss_grad"}
}

// Driver is the part of the CUDA driver API the backend launches through:
// libcuda on a GPU, the CPU emulator of package cudaemu in tests. Work
// goes to one queue (a stream) in order.
type Driver interface {
	Alloc(bytes int) (uint64, error)
	Free(p uint64)
	// HtoD and DtoH copy from and to any host memory and wait for the
	// queue.
	HtoD(dst uint64, src []float32) error
	DtoH(dst []float32, src uint64) error
	// Launch queues a kernel of kernels.cu by name; arguments are 8-byte
	// slots (ints and floats in the low bytes).
	Launch(name string, gx, gy, bx, by int, args []uint64) error
	// Sync waits for the queue.
	Sync() error
	// HostAlloc returns n floats of page-locked host memory, for the
	// queued copies; HostFree releases it.
	HostAlloc(n int) ([]float32, error)
	HostFree(h []float32)
	// HtoDAsync and DtoHAsync queue copies from and to HostAlloc memory.
	HtoDAsync(dst uint64, src []float32) error
	DtoHAsync(dst []float32, src uint64) error
	// Record marks the queue's position with event ev (0 to 7); Wait
	// blocks until the queue has passed it.
	Record(ev int) error
	Wait(ev int) error
	// CanCapture says whether the queue can be captured as a graph.
	// Between BeginCapture and EndCapture the queued work is recorded, not
	// run; EndCapture returns it as a graph that Replay queues again;
	// DropGraph releases it.
	CanCapture() bool
	BeginCapture() error
	EndCapture() (uint64, error)
	Replay(g uint64) error
	DropGraph(g uint64)
}

// libDriver is Driver over the loaded libcuda and the embedded PTX.
type libDriver struct {
	lib *cudaLib
	fn  map[string]unsafe.Pointer
}

func (d *libDriver) Alloc(bytes int) (uint64, error)           { return d.lib.alloc(bytes) }
func (d *libDriver) Free(p uint64)                             { d.lib.free(p) }
func (d *libDriver) HtoD(dst uint64, src []float32) error      { return d.lib.htod(dst, src) }
func (d *libDriver) DtoH(dst []float32, src uint64) error      { return d.lib.dtoh(dst, src) }
func (d *libDriver) Sync() error                               { return d.lib.sync() }
func (d *libDriver) HostAlloc(n int) ([]float32, error)        { return d.lib.hostAlloc(n) }
func (d *libDriver) HostFree(h []float32)                      { d.lib.hostFree(h) }
func (d *libDriver) HtoDAsync(dst uint64, src []float32) error { return d.lib.htodAsync(dst, src) }
func (d *libDriver) DtoHAsync(dst []float32, src uint64) error { return d.lib.dtohAsync(dst, src) }
func (d *libDriver) Record(ev int) error                       { return d.lib.record(ev) }
func (d *libDriver) Wait(ev int) error                         { return d.lib.wait(ev) }
func (d *libDriver) CanCapture() bool                          { return d.lib.canCapture() }
func (d *libDriver) BeginCapture() error                       { return d.lib.beginCapture() }
func (d *libDriver) EndCapture() (uint64, error)               { return d.lib.endCapture() }
func (d *libDriver) Replay(g uint64) error                     { return d.lib.graphLaunch(g) }
func (d *libDriver) DropGraph(g uint64)                        { d.lib.graphDrop(g) }
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
	drv       Driver
	lib       *cudaLib // nil on an emulated device
	info      CUDAInfo
	ptr       []uint64 // every buffer, views included
	owned     []uint64 // the allocations, freed by Close
	cublas    bool
	err       error
	args      []uint64    // launch arguments, reused
	scratch   uint64      // partial sums of reductions and split-K products
	scratchN  int         // its floats
	host      [][]float32 // page-locked memory from HostAlloc
	graphs    []uint64
	retired   []uint64 // outgrown scratch a captured graph may still read
	capturing bool
	convCols  int // ConvScratch (0: cudaConvScratch)
}

// cudaConvScratch is a GPU's columns budget (64 MiB): parts of the batch
// large enough for GEMMs that fill the GPU.
const cudaConvScratch = 16 << 20

// ConvScratch implements ConvScratcher.
func (b *CUDABackend) ConvScratch() int {
	if b.convCols > 0 {
		return b.convCols
	}
	return cudaConvScratch
}

// SetConvScratch sets the floats of columns a convolution unfolds at once
// in programs planned from now on (tests cut the batch into small parts).
func (b *CUDABackend) SetConvScratch(n int) { b.convCols = n }

var (
	_ Backend          = (*CUDABackend)(nil)
	_ Async            = (*CUDABackend)(nil)
	_ MemoryReporter   = (*CUDABackend)(nil)
	_ Releaser         = (*CUDABackend)(nil)
	_ OverheadReporter = (*CUDABackend)(nil)
	_ ConvScratcher    = (*CUDABackend)(nil)
)

// MemoryOverhead implements OverheadReporter: the reductions' and split-K
// products' scratch space (grown to what the plan's steps need, estimated
// here at 16 MiB) and, where cuBLAS runs, its kernels' own allocations.
// cuBLAS's 32 MiB workspace and the context are taken before MemInfo is
// read.
func (b *CUDABackend) MemoryOverhead() int64 {
	const scratch, blas = 16 << 20, 16 << 20
	if b.cublas {
		return scratch + blas
	}
	return scratch
}

// NewCUDABackendOn runs the backend on another driver: the tests use the
// CPU emulator, so the kernels and this file's launch code are checked
// without a GPU. cuBLAS is not used there.
func NewCUDABackendOn(d Driver, info CUDAInfo) *CUDABackend {
	info.GEMM = "own SGEMM kernel"
	if info.SMs == 0 {
		info.SMs = 4
	}
	return &CUDABackend{drv: d, info: info}
}

// OpenCUDA loads the CUDA driver (libcuda.so.1, nvcuda.dll), selects device ordinal (its primary
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
		return fail(fmt.Errorf("device cuda:%d does not exist: CUDA sees %s (check CUDA_VISIBLE_DEVICES)", ordinal, plural.Count(n, "device")))
	}
	if info.Name, info.Major, info.Minor, info.SMs, info.Memory, err = lib.device(ordinal); err != nil {
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
	b.owned = append(b.owned, p)
	buf := Buf(len(b.ptr) - 1)
	b.Fill(buf, n, 0)
	return buf, b.err
}

// View implements Backend: a pointer into parent.
func (b *CUDABackend) View(parent Buf, off, n int) (Buf, error) {
	if b.err != nil {
		return NoBuf, b.err
	}
	if parent < 0 || int(parent) >= len(b.ptr) || off < 0 || n < 0 {
		return NoBuf, fmt.Errorf("%w: view [%d, %d) of buffer %d is out of range", ErrExec, off, off+n, parent)
	}
	b.ptr = append(b.ptr, b.ptr[parent]+4*uint64(off))
	return Buf(len(b.ptr) - 1), nil
}

// FreeAll releases every buffer but keeps the device open: the trainer
// plans again from nothing after running out of memory.
func (b *CUDABackend) FreeAll() error {
	if b.drv == nil {
		return nil
	}
	b.setErr(b.drv.Sync())
	for _, g := range b.graphs {
		b.drv.DropGraph(g)
	}
	for _, h := range b.host {
		b.drv.HostFree(h)
	}
	for _, p := range b.owned {
		b.drv.Free(p)
	}
	if b.scratch != 0 {
		b.drv.Free(b.scratch)
	}
	for _, p := range b.retired {
		b.drv.Free(p)
	}
	b.ptr, b.owned, b.scratch, b.scratchN, b.host, b.graphs, b.retired = nil, nil, 0, 0, nil, nil, nil
	err := b.err
	b.err = nil
	return err
}

// Close implements Backend.
func (b *CUDABackend) Close() error {
	if b.drv == nil {
		return nil
	}
	b.FreeAll()
	if b.lib != nil {
		b.lib.close()
	}
	b.drv, b.lib = nil, nil
	return nil
}

// scratchOf returns n floats of scratch space, growing it when needed.
func (b *CUDABackend) scratchOf(n int) uint64 {
	if n <= b.scratchN || b.err != nil {
		return b.scratch
	}
	if b.capturing {
		b.setErr(fmt.Errorf("%w: scratch space grew while a step was captured", ErrExec))
		return 0
	}
	if b.scratch != 0 { // graphs captured with it read it still: free it with them
		b.retired = append(b.retired, b.scratch)
		b.scratch, b.scratchN = 0, 0
	}
	n = max(n, 1<<16)
	p, err := b.drv.Alloc(4 * n)
	if err != nil {
		b.setErr(fmt.Errorf("scratch space of %d floats: %w", n, err))
		return 0
	}
	b.scratch, b.scratchN = p, n
	return p
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
	if b.err == nil {
		b.setErr(b.drv.Sync())
	}
	return b.err
}

// HostAlloc implements Async: page-locked memory, released by Close.
func (b *CUDABackend) HostAlloc(n int) ([]float32, error) {
	if b.err != nil {
		return nil, b.err
	}
	h, err := b.drv.HostAlloc(n)
	if err != nil {
		var ce *cuError
		if errors.As(err, &ce) && ce.code == 2 {
			return nil, fmt.Errorf("%w: %d KiB of page-locked host memory: %w", ErrOutOfMemory, (4*n)>>10, err)
		}
		return nil, err
	}
	b.host = append(b.host, h)
	return h, nil
}

// UploadAsync implements Async.
func (b *CUDABackend) UploadAsync(dst Buf, src []float32) {
	if b.err == nil {
		b.setErr(b.drv.HtoDAsync(b.ptr[dst], src))
	}
}

// DownloadAsync implements Async.
func (b *CUDABackend) DownloadAsync(dst []float32, src Buf) {
	if b.err == nil {
		b.setErr(b.drv.DtoHAsync(dst, b.ptr[src]))
	}
}

// Record implements Async.
func (b *CUDABackend) Record(ev int) {
	if b.err == nil {
		b.setErr(b.drv.Record(ev))
	}
}

// Wait implements Async.
func (b *CUDABackend) Wait(ev int) error {
	if b.err == nil {
		b.setErr(b.drv.Wait(ev))
	}
	return b.err
}

// CanCapture implements Async.
func (b *CUDABackend) CanCapture() bool { return b.drv != nil && b.drv.CanCapture() }

// Capture implements Async: what f queues becomes a graph. A capture
// that fails (an operation the driver does not capture) leaves the backend
// usable: the error is returned, not kept, and nothing f queued has run.
func (b *CUDABackend) Capture(f func()) (Captured, error) {
	if b.err != nil {
		return 0, b.err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.drv.BeginCapture(); err != nil {
		return 0, fmt.Errorf("%w: capturing a step: %w", ErrExec, err)
	}
	b.capturing = true
	f()
	b.capturing = false
	g, err := b.drv.EndCapture()
	if b.err != nil {
		err, b.err = b.err, nil
		if g != 0 {
			b.drv.DropGraph(g)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%w: capturing a step: %w", ErrExec, err)
	}
	b.graphs = append(b.graphs, g)
	return Captured(g), nil
}

// Replay implements Async.
func (b *CUDABackend) Replay(g Captured) {
	if b.err == nil {
		b.setErr(b.drv.Replay(uint64(g)))
	}
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

// Apply implements Backend.
func (b *CUDABackend) Apply(in, out Buf, n int, e Epilogue) {
	b.run("gw_apply", n, b.p(in), b.p(out), iv(n), b.p(e.Scale), b.p(e.Bias), iv(max(e.Inner, 1)), iv(max(e.C, 1)), b.p(e.Mask))
}

// splitK is how many parts the own SGEMM cuts k into: when the product
// has too few 64×64 tiles to fill the GPU and k is long (a convolution's
// filter gradient: 16×150 with k = 25,600 at batch 256), each part of at
// least 512 of k runs in its own blocks.
func (b *CUDABackend) splitK(m, n, k int) int {
	tiles := ((m + 63) / 64) * ((n + 63) / 64)
	want := 2 * max(b.info.SMs, 1)
	if tiles >= want || k < 1024 {
		return 1
	}
	return max(1, min((want+tiles-1)/tiles, k/512, 64))
}

// Gemm implements Backend: cuBLAS when present, else the own kernel (with
// k split when that fills the GPU better).
func (b *CUDABackend) Gemm(ta, tb bool, m, n, k int, x, y, c Buf, beta float32) {
	if b.err != nil {
		return
	}
	if b.cublas && b.lib != nil {
		b.setErr(b.lib.sgemm(ta, tb, m, n, k, b.p(x), b.p(y), b.p(c), beta))
		return
	}
	tilesM := (m + 63) / 64
	splits := b.splitK(m, n, k)
	if splits == 1 {
		b.launch("gw_sgemm", (n+63)/64, tilesM, 16, 16, bv(ta), bv(tb), iv(m), iv(n), iv(k), b.p(x), b.p(y), b.p(c), fv(beta),
			iv(tilesM), iv(k), 0)
		return
	}
	kchunk := ((k+splits-1)/splits + 15) &^ 15
	splits = (k + kchunk - 1) / kchunk
	part := b.scratchOf(splits * m * n)
	b.launch("gw_sgemm", (n+63)/64, tilesM*splits, 16, 16, bv(ta), bv(tb), iv(m), iv(n), iv(k), b.p(x), b.p(y), b.p(c), fv(beta),
		iv(tilesM), iv(kchunk), part)
	b.run("gw_reduce_final", m*n, part, b.p(c), iv(m*n), iv(splits), fv(beta))
}

// Repeat implements Backend.
func (b *CUDABackend) Repeat(in, out Buf, outer, rep, inner int) {
	b.run("gw_repeat", outer*rep*inner, b.p(in), b.p(out), iv(outer), iv(rep), iv(inner))
}

// reduceRows sums, for each of nrows rows r, the A×B values at
// in + r·strideC + a·strideA + b into out[r]: one block per row and part
// of a row, parts (when a row is long and rows are few) added by a second
// kernel.
func (b *CUDABackend) reduceRows(in uint64, out uint64, nrows, A, B, strideA, strideC int) {
	total := A * B
	splits := 1
	if want := 2 * max(b.info.SMs, 1); nrows < want && total >= 4096 {
		splits = min((want+nrows-1)/nrows, total/2048, 256)
	}
	dst := out
	if splits > 1 {
		dst = b.scratchOf(splits * nrows)
	}
	b.launch("gw_reduce_rows", splits, min(nrows, 65535), 256, 1, in, dst, iv(nrows), iv(A), iv(B),
		uint64(strideA), uint64(strideC), iv(splits))
	if splits > 1 {
		b.run("gw_reduce_final", nrows, dst, out, iv(nrows), iv(splits), fv(0))
	}
}

// Sum implements Backend: rows (inner 1) or columns reduced in parallel.
func (b *CUDABackend) Sum(in, out Buf, outer, red, inner int) {
	if inner == 1 {
		b.reduceRows(b.p(in), b.p(out), outer, 1, red, 0, red)
		return
	}
	tiles := (inner + 31) / 32
	splits := 1
	if want := 2 * max(b.info.SMs, 1); outer*tiles < want && red >= 64 {
		splits = min((want+outer*tiles-1)/(outer*tiles), red/32, 256)
	}
	dst := b.p(out)
	if splits > 1 {
		dst = b.scratchOf(splits * outer * inner)
	}
	b.launch("gw_reduce_cols", tiles, min(outer*splits, 65535), 32, 8, b.p(in), dst, iv(outer), iv(red), iv(inner), iv(splits))
	if splits > 1 {
		b.run("gw_reduce_final", outer*inner, dst, b.p(out), iv(outer*inner), iv(splits), fv(0))
	}
}

// SumKeep implements Backend.
func (b *CUDABackend) SumKeep(in, out Buf, outer, keep, inner int) {
	b.reduceRows(b.p(in), b.p(out), keep, outer, inner, keep*inner, inner)
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

// MaxPoolGrad implements Backend: gathered per input element, no fill.
func (b *CUDABackend) MaxPoolGrad(g, idx, mask, out Buf, p Pool) {
	b.run("gw_maxpool_grad", p.N*p.C*p.H*p.W, b.p(g), b.p(idx), b.p(mask), b.p(out), iv(p.N*p.C), iv(p.H), iv(p.W),
		iv(p.OH), iv(p.OW), iv(p.KH), iv(p.KW), iv(p.SH), iv(p.SW))
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
		iv(p.Pad), iv(p.OH), iv(p.OW), iv(p.S()))
}

// Col2im implements Backend.
func (b *CUDABackend) Col2im(cols, x Buf, p Conv) {
	b.run("gw_col2im", p.N*p.C*p.H*p.W, b.p(cols), b.p(x), iv(p.N), iv(p.C), iv(p.H), iv(p.W), iv(p.K),
		iv(p.Pad), iv(p.OH), iv(p.OW), iv(p.S()))
}

// Swap01 implements Backend.
func (b *CUDABackend) Swap01(in, out Buf, x, y, z int, e Epilogue) {
	b.run("gw_swap01", x*y*z, b.p(in), b.p(out), iv(x), iv(y), iv(z), b.p(e.Scale), b.p(e.Bias),
		iv(max(e.Inner, 1)), iv(max(e.C, 1)), b.p(e.Mask))
}

// Adam implements Backend: one launch for every parameter.
func (b *CUDABackend) Adam(p, g, m, v Buf, n int, s Buf) {
	b.run("gw_adam", n, b.p(p), b.p(g), b.p(m), b.p(v), iv(n), b.p(s))
}

// SGD implements Backend: one launch for every parameter.
func (b *CUDABackend) SGD(p, g, vel Buf, n int, s Buf) {
	b.run("gw_sgd", n, b.p(p), b.p(g), b.p(vel), iv(n), b.p(s))
}

// DetLoss implements Backend: one thread a cell.
func (b *CUDABackend) DetLoss(head, tgt, terms Buf, d Det) {
	b.run("gw_det_loss", d.Cells(), b.p(head), b.p(tgt), b.p(terms), iv(d.N), iv(d.Classes), iv(d.H), iv(d.W),
		fv(d.GIoU), fv(d.L1), fv(d.Cls), fv(d.Obj))
}

// DetLossGrad implements Backend: one thread a cell.
func (b *CUDABackend) DetLossGrad(head, tgt, g, out Buf, d Det) {
	b.run("gw_det_loss_grad", d.Cells(), b.p(head), b.p(tgt), b.p(g), b.p(out), iv(d.N), iv(d.Classes), iv(d.H), iv(d.W),
		fv(d.GIoU), fv(d.L1), fv(d.Cls), fv(d.Obj))
}

// KernelNames lists the kernels the backend launches (for tests).
func KernelNames() []string { return kernelNames() }

// UseOwnGEMM makes the backend use its own SGEMM kernel even when cuBLAS
// was found (tests and benchmarks).
func (b *CUDABackend) UseOwnGEMM() {
	b.cublas = false
	b.info.GEMM = "own SGEMM kernel"
}
