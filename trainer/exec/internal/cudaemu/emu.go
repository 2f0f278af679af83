// Package cudaemu runs gpuwizard's CUDA kernels (assets/kernels/kernels.cu,
// compiled here as C) on the CPU, behind the same driver calls as the real
// GPU: allocation, copies and launches by name with packed arguments. The
// tests of trainer/exec drive the CUDA backend through it, so the kernels
// and the backend's launch code are checked on machines without a GPU.
// Every GPU thread runs on the calling OS thread (coroutines where kernels
// synchronise), so it is meant for small test problems only.
package cudaemu

/*
#cgo CFLAGS: -O2 -std=gnu11 -Wno-unused-function
#cgo LDFLAGS: -lm
#include "emu.h"
#include "kernels_sha256.h"
#include "../../../../assets/kernels/kernels.cu"

static float u2f(uint64_t v) { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }
#define P(i) ((float *)(uintptr_t)a[i])
#define I(i) ((int)(int32_t)(uint32_t)a[i])
#define F(i) u2f(a[i])
#define L(i) ((long long)a[i])

typedef void (*emu_call)(uint64_t *a);
static void c_fill(uint64_t *a) { gw_fill(P(0), I(1), F(2)); }
static void c_binary(uint64_t *a) { gw_binary(I(0), P(1), P(2), P(3), I(4), I(5), I(6)); }
static void c_unary(uint64_t *a) { gw_unary(I(0), P(1), P(2), I(3)); }
static void c_apply(uint64_t *a) { gw_apply(P(0), P(1), I(2), P(3), P(4), I(5), I(6), P(7)); }
static void c_repeat(uint64_t *a) { gw_repeat(P(0), P(1), I(2), I(3), I(4)); }
static void c_reduce_rows(uint64_t *a) { gw_reduce_rows(P(0), P(1), I(2), I(3), I(4), L(5), L(6), I(7)); }
static void c_reduce_cols(uint64_t *a) { gw_reduce_cols(P(0), P(1), I(2), I(3), I(4), I(5)); }
static void c_reduce_final(uint64_t *a) { gw_reduce_final(P(0), P(1), I(2), I(3), F(4)); }
static void c_softmax(uint64_t *a) { gw_softmax(P(0), P(1), I(2), I(3), I(4)); }
static void c_softmax_grad(uint64_t *a) { gw_softmax_grad(P(0), P(1), P(2), I(3), I(4), I(5)); }
static void c_maxpool(uint64_t *a) { gw_maxpool(P(0), P(1), P(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11)); }
static void c_maxpool_grad(uint64_t *a) { gw_maxpool_grad(P(0), P(1), P(2), P(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11), I(12)); }
static void c_bn_train(uint64_t *a) { gw_bn_train(P(0), P(1), P(2), P(3), I(4), I(5), I(6), F(7), F(8)); }
static void c_bn_eval(uint64_t *a) { gw_bn_eval(P(0), P(1), P(2), I(3), I(4), I(5), F(6)); }
static void c_bn_grad(uint64_t *a) { gw_bn_grad(P(0), P(1), P(2), P(3), I(4), I(5), I(6)); }
static void c_im2col(uint64_t *a) { gw_im2col(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10)); }
static void c_col2im(uint64_t *a) { gw_col2im(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10)); }
static void c_swap01(uint64_t *a) { gw_swap01(P(0), P(1), I(2), I(3), I(4), P(5), P(6), I(7), I(8), P(9)); }
static void c_adam(uint64_t *a) { gw_adam(P(0), P(1), P(2), P(3), I(4), P(5)); }
static void c_sgd(uint64_t *a) { gw_sgd(P(0), P(1), P(2), I(3), P(4)); }
static void c_det_loss(uint64_t *a) { gw_det_loss(P(0), P(1), P(2), I(3), I(4), I(5), I(6), F(7), F(8), F(9), F(10)); }
static void c_det_loss_grad(uint64_t *a) { gw_det_loss_grad(P(0), P(1), P(2), P(3), I(4), I(5), I(6), I(7), F(8), F(9), F(10), F(11)); }
static void c_sgemm(uint64_t *a) { gw_sgemm(I(0), I(1), I(2), I(3), I(4), P(5), P(6), P(7), F(8), I(9), I(10), P(11)); }

static struct { const char *name; emu_call f; int sync; } emu_table[] = {
	{"gw_fill", c_fill, 0}, {"gw_binary", c_binary, 0}, {"gw_unary", c_unary, 0}, {"gw_apply", c_apply, 0},
	{"gw_repeat", c_repeat, 0}, {"gw_reduce_rows", c_reduce_rows, 1}, {"gw_reduce_cols", c_reduce_cols, 1},
	{"gw_reduce_final", c_reduce_final, 0}, {"gw_softmax", c_softmax, 0}, {"gw_softmax_grad", c_softmax_grad, 0},
	{"gw_maxpool", c_maxpool, 0}, {"gw_maxpool_grad", c_maxpool_grad, 0}, {"gw_bn_train", c_bn_train, 1},
	{"gw_bn_eval", c_bn_eval, 0}, {"gw_bn_grad", c_bn_grad, 1}, {"gw_im2col", c_im2col, 0},
	{"gw_col2im", c_col2im, 0}, {"gw_swap01", c_swap01, 0}, {"gw_adam", c_adam, 0}, {"gw_sgd", c_sgd, 0},
	{"gw_sgemm", c_sgemm, 1}, {"gw_det_loss", c_det_loss, 0}, {"gw_det_loss_grad", c_det_loss_grad, 0}, {NULL, NULL, 0}};

// Synchronising kernels: every GPU thread of a block is a coroutine with
// its own stack; the scheduler resumes each in turn until it yields (at a
// barrier or a warp shuffle, see emu.h) or returns, round after round,
// until the whole block has returned. The coroutines are the platform's
// (coro_unix.c: a few instructions on x86-64, swapcontext elsewhere;
// coro_windows.c: fibers): emu_coro_alloc makes room for nt of them (0 on
// failure), emu_coro_init makes coroutine t run body from its start at its
// next resume, emu_coro_resume runs t until it yields or body returns, and
// emu_coro_yield, called inside t, goes back to the scheduler.
int emu_coro_alloc(unsigned nt);
void emu_coro_init(unsigned t, void (*body)(void));
void emu_coro_resume(unsigned t);
void emu_coro_yield(unsigned t);

static int *emu_done;
static unsigned emu_cap;
static emu_call emu_f;
static uint64_t *emu_args;
static unsigned emu_cur;

static void emu_body(void) {
	emu_f(emu_args);
	emu_done[emu_cur] = 1;
	emu_ndone++;
	if (emu_arrived > 0 && emu_arrived == emu_nt - emu_ndone) { // the others wait for no one else
		emu_arrived = 0;
		emu_gen++;
	}
}

static void emu_yield(void) { emu_coro_yield(emu_cur); }

static int emu_block_sync(unsigned nt, unsigned bx) {
	if (nt > emu_cap) {
		free(emu_done);
		free(emu_lane[0]);
		free(emu_lane[1]);
		free(emu_shfl_count);
		emu_done = calloc(nt, sizeof *emu_done);
		emu_lane[0] = calloc(nt, sizeof(float));
		emu_lane[1] = calloc(nt, sizeof(float));
		emu_shfl_count = calloc(nt, sizeof(unsigned));
		if (!emu_coro_alloc(nt) || !emu_done || !emu_lane[0] || !emu_lane[1] || !emu_shfl_count) {
			emu_cap = 0;
			return -2;
		}
		emu_cap = nt;
	}
	emu_nt = nt;
	emu_ndone = emu_arrived = 0;
	memset(emu_shfl_count, 0, nt * sizeof(unsigned));
	for (unsigned t = 0; t < nt; t++) {
		emu_coro_init(t, emu_body);
		emu_done[t] = 0;
	}
	for (unsigned left = nt; left > 0;) {
		left = 0;
		for (unsigned t = 0; t < nt; t++) {
			if (emu_done[t]) continue;
			emu_cur = t;
			threadIdx.x = t % bx; threadIdx.y = t / bx; threadIdx.z = 0;
			emu_coro_resume(t);
			if (!emu_done[t]) left++;
		}
	}
	return 0;
}

static int emu_launch(const char *name, unsigned gx, unsigned gy, unsigned bx, unsigned by, uint64_t *args) {
	int k = 0;
	while (emu_table[k].name && strcmp(emu_table[k].name, name)) k++;
	if (!emu_table[k].name) return -1;
	gridDim.x = gx; gridDim.y = gy; gridDim.z = 1;
	blockDim.x = bx; blockDim.y = by; blockDim.z = 1;
	for (unsigned y = 0; y < gy; y++)
		for (unsigned x = 0; x < gx; x++) {
			blockIdx.x = x; blockIdx.y = y; blockIdx.z = 0;
			if (emu_table[k].sync) {
				emu_f = emu_table[k].f;
				emu_args = args;
				int r = emu_block_sync(bx * by, bx);
				if (r) return r;
				continue;
			}
			for (unsigned ty = 0; ty < by; ty++)
				for (unsigned tx = 0; tx < bx; tx++) {
					threadIdx.x = tx; threadIdx.y = ty; threadIdx.z = 0;
					emu_table[k].f(args);
				}
		}
	return 0;
}
// Device addresses are host addresses held as integers; the conversions
// happen here, in C.
static uint64_t emu_alloc(size_t n) { return (uint64_t)(uintptr_t)calloc(n, 1); }
static void emu_free(uint64_t p) { free((void *)(uintptr_t)p); }
static void emu_htod(uint64_t dst, const float *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); }
static void emu_dtoh(float *dst, uint64_t src, size_t n) { memcpy(dst, (const void *)(uintptr_t)src, n); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Device is an emulated GPU: memory is host memory from C's allocator
// (device pointers are its addresses), and launches run the kernels on the
// CPU, one at a time, when they are queued. It learns stream capture as
// the driver does it: between BeginCapture and EndCapture launches and
// queued copies are recorded instead of run, and what the driver forbids
// while a stream is captured (synchronous copies, allocation, waiting)
// fails; Replay runs a recording again, reading the arguments recorded.
type Device struct {
	mu        sync.Mutex
	alloc     map[uint64]bool
	capturing bool
	rec       []op
	graphs    map[uint64][]op
	nextGraph uint64
	replays   int
	launches  int
	counts    map[string]int
}

// op is one recorded piece of queued work.
type op struct {
	kind           int // opLaunch, opHtoD, opDtoH
	name           string
	gx, gy, bx, by int
	args           []uint64
	dev            uint64
	host           []float32
}

const (
	opLaunch = iota
	opHtoD
	opDtoH
)

// errCapture is the driver's CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
func errCapture(what string) error {
	return fmt.Errorf("cudaemu: %s is not permitted while the stream is captured (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)", what)
}

// KernelsSHA256 is the SHA-256 of the kernels.cu this build compiled, as
// kernels_sha256.h (written by make kernels) records it.
func KernelsSHA256() string { return C.GW_KERNELS_SHA256 }

// New returns an emulated device.
func New() *Device {
	return &Device{alloc: map[uint64]bool{}, graphs: map[uint64][]op{}, counts: map[string]int{}}
}

// Alloc returns bytes of zeroed memory.
func (d *Device) Alloc(bytes int) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return 0, errCapture("cuMemAlloc")
	}
	p := uint64(C.emu_alloc(C.size_t(max(bytes, 4))))
	if p == 0 {
		return 0, fmt.Errorf("cudaemu: out of host memory for %d bytes", bytes)
	}
	d.alloc[p] = true
	return p, nil
}

// Free releases memory from Alloc.
func (d *Device) Free(p uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.alloc[p] {
		delete(d.alloc, p)
		C.emu_free(C.uint64_t(p))
	}
}

// HtoD copies src to device address dst.
func (d *Device) HtoD(dst uint64, src []float32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return errCapture("a synchronous copy")
	}
	htod(dst, src)
	return nil
}

func htod(dst uint64, src []float32) {
	if len(src) > 0 {
		C.emu_htod(C.uint64_t(dst), (*C.float)(unsafe.Pointer(&src[0])), C.size_t(4*len(src)))
	}
}

func dtoh(dst []float32, src uint64) {
	if len(dst) > 0 {
		C.emu_dtoh((*C.float)(unsafe.Pointer(&dst[0])), C.uint64_t(src), C.size_t(4*len(dst)))
	}
}

// DtoH copies from device address src to dst.
func (d *Device) DtoH(dst []float32, src uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return errCapture("a synchronous copy")
	}
	dtoh(dst, src)
	return nil
}

// Launch runs kernel name on a gx×gy grid of bx×by blocks with the
// arguments packed as the real driver takes them (8-byte slots), or
// records it while capturing.
func (d *Device) Launch(name string, gx, gy, bx, by int, args []uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		d.rec = append(d.rec, op{kind: opLaunch, name: name, gx: gx, gy: gy, bx: bx, by: by, args: append([]uint64(nil), args...)})
		return nil
	}
	return d.launch(name, gx, gy, bx, by, args)
}

func (d *Device) launch(name string, gx, gy, bx, by int, args []uint64) error {
	d.launches++
	d.counts[name]++
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	a := (*C.uint64_t)(C.calloc(C.size_t(len(args)+1), 8))
	defer C.free(unsafe.Pointer(a))
	for i, v := range args {
		*(*C.uint64_t)(unsafe.Add(unsafe.Pointer(a), 8*i)) = C.uint64_t(v)
	}
	if r := C.emu_launch(cn, C.uint(gx), C.uint(gy), C.uint(bx), C.uint(by), a); r != 0 {
		return fmt.Errorf("cudaemu: launching %s: code %d", name, int(r))
	}
	return nil
}

// Sync waits for the queue: queued work has already run.
func (d *Device) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return errCapture("synchronising")
	}
	return nil
}

// HostAlloc returns n floats of C memory (the emulator's page-locked
// memory).
func (d *Device) HostAlloc(n int) ([]float32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return nil, errCapture("cuMemAllocHost")
	}
	p := C.calloc(C.size_t(max(n, 1)), 4)
	if p == nil {
		return nil, fmt.Errorf("cudaemu: out of host memory for %d floats", n)
	}
	return unsafe.Slice((*float32)(p), max(n, 1))[:n], nil
}

// HostFree releases memory from HostAlloc.
func (d *Device) HostFree(h []float32) {
	if cap(h) > 0 {
		C.free(unsafe.Pointer(unsafe.SliceData(h[:1])))
	}
}

// HtoDAsync queues (runs, or records) a copy to the device.
func (d *Device) HtoDAsync(dst uint64, src []float32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		d.rec = append(d.rec, op{kind: opHtoD, dev: dst, host: src})
		return nil
	}
	htod(dst, src)
	return nil
}

// DtoHAsync queues (runs, or records) a copy from the device.
func (d *Device) DtoHAsync(dst []float32, src uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		d.rec = append(d.rec, op{kind: opDtoH, dev: src, host: dst})
		return nil
	}
	dtoh(dst, src)
	return nil
}

// Record marks the queue: its work has already run.
func (d *Device) Record(ev int) error {
	if ev < 0 || ev >= 8 {
		return fmt.Errorf("cudaemu: no event %d", ev)
	}
	return nil
}

// Wait waits for an event: its work has already run.
func (d *Device) Wait(ev int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return errCapture("waiting for an event")
	}
	return nil
}

// CanCapture says the emulator captures.
func (d *Device) CanCapture() bool { return true }

// BeginCapture starts recording.
func (d *Device) BeginCapture() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capturing {
		return errCapture("beginning a capture")
	}
	d.capturing, d.rec = true, nil
	return nil
}

// EndCapture stops recording and returns the recording's handle.
func (d *Device) EndCapture() (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.capturing {
		return 0, fmt.Errorf("cudaemu: the stream is not being captured")
	}
	d.capturing = false
	d.nextGraph++
	d.graphs[d.nextGraph], d.rec = d.rec, nil
	return d.nextGraph, nil
}

// Replay runs a recording.
func (d *Device) Replay(g uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ops, ok := d.graphs[g]
	if !ok || d.capturing {
		return fmt.Errorf("cudaemu: graph %d cannot be launched here", g)
	}
	d.replays++
	for _, o := range ops {
		switch o.kind {
		case opLaunch:
			if err := d.launch(o.name, o.gx, o.gy, o.bx, o.by, o.args); err != nil {
				return err
			}
		case opHtoD:
			htod(o.dev, o.host)
		case opDtoH:
			dtoh(o.host, o.dev)
		}
	}
	return nil
}

// DropGraph releases a recording.
func (d *Device) DropGraph(g uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.graphs, g)
}

// Counts returns how many times each kernel ran, and resets the counts.
func (d *Device) Counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.counts
	d.counts = map[string]int{}
	return c
}

// Stats returns how many kernels ran (recorded ones count when replayed)
// and how many graphs were replayed.
func (d *Device) Stats() (launches, replays int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.launches, d.replays
}
