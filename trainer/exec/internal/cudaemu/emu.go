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
#include "../../../../assets/kernels/kernels.cu"

static float u2f(uint64_t v) { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }
#define P(i) ((float *)(uintptr_t)a[i])
#define I(i) ((int)(int32_t)(uint32_t)a[i])
#define F(i) u2f(a[i])

typedef void (*emu_call)(uint64_t *a);
static void c_fill(uint64_t *a) { gw_fill(P(0), I(1), F(2)); }
static void c_binary(uint64_t *a) { gw_binary(I(0), P(1), P(2), P(3), I(4), I(5), I(6)); }
static void c_unary(uint64_t *a) { gw_unary(I(0), P(1), P(2), I(3)); }
static void c_repeat(uint64_t *a) { gw_repeat(P(0), P(1), I(2), I(3), I(4)); }
static void c_sum_axis(uint64_t *a) { gw_sum_axis(P(0), P(1), I(2), I(3), I(4)); }
static void c_sum_rows(uint64_t *a) { gw_sum_rows(P(0), P(1), I(2), I(3)); }
static void c_softmax(uint64_t *a) { gw_softmax(P(0), P(1), I(2), I(3), I(4)); }
static void c_softmax_grad(uint64_t *a) { gw_softmax_grad(P(0), P(1), P(2), I(3), I(4), I(5)); }
static void c_maxpool(uint64_t *a) { gw_maxpool(P(0), P(1), P(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11)); }
static void c_maxpool_grad(uint64_t *a) { gw_maxpool_grad(P(0), P(1), P(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10)); }
static void c_bn_train(uint64_t *a) { gw_bn_train(P(0), P(1), P(2), P(3), I(4), I(5), I(6), F(7), F(8)); }
static void c_bn_eval(uint64_t *a) { gw_bn_eval(P(0), P(1), P(2), I(3), I(4), I(5), F(6)); }
static void c_bn_grad(uint64_t *a) { gw_bn_grad(P(0), P(1), P(2), P(3), I(4), I(5), I(6)); }
static void c_im2col(uint64_t *a) { gw_im2col(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9)); }
static void c_col2im(uint64_t *a) { gw_col2im(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9)); }
static void c_swap01(uint64_t *a) { gw_swap01(P(0), P(1), I(2), I(3), I(4), P(5), I(6)); }
static void c_adam(uint64_t *a) { gw_adam(P(0), P(1), P(2), P(3), I(4), F(5), F(6), F(7), F(8), F(9)); }
static void c_sgd(uint64_t *a) { gw_sgd(P(0), P(1), P(2), I(3), F(4), F(5), F(6)); }
static void c_sgemm(uint64_t *a) { gw_sgemm(I(0), I(1), I(2), I(3), I(4), P(5), P(6), P(7), F(8)); }

static struct { const char *name; emu_call f; int sync; } emu_table[] = {
	{"gw_fill", c_fill, 0}, {"gw_binary", c_binary, 0}, {"gw_unary", c_unary, 0},
	{"gw_repeat", c_repeat, 0}, {"gw_sum_axis", c_sum_axis, 0}, {"gw_sum_rows", c_sum_rows, 1},
	{"gw_softmax", c_softmax, 0}, {"gw_softmax_grad", c_softmax_grad, 0}, {"gw_maxpool", c_maxpool, 0},
	{"gw_maxpool_grad", c_maxpool_grad, 0}, {"gw_bn_train", c_bn_train, 1}, {"gw_bn_eval", c_bn_eval, 0},
	{"gw_bn_grad", c_bn_grad, 1}, {"gw_im2col", c_im2col, 0}, {"gw_col2im", c_col2im, 0},
	{"gw_swap01", c_swap01, 0}, {"gw_adam", c_adam, 0}, {"gw_sgd", c_sgd, 0}, {"gw_sgemm", c_sgemm, 1},
	{NULL, NULL, 0}};

// Synchronising kernels: every GPU thread of a block is a coroutine with
// its own stack; the scheduler resumes each in turn until it reaches
// __syncthreads (it swaps back) or returns, round after round, until the
// whole block has returned.
#define EMU_STACK (64 * 1024)
static ucontext_t *emu_ctx;
static char *emu_stacks;
static int *emu_done;
static unsigned emu_cap;
static emu_call emu_f;
static uint64_t *emu_args;
static unsigned emu_cur;

static void emu_tramp(void) {
	emu_f(emu_args);
	emu_done[emu_cur] = 1;
}

static int emu_block_sync(unsigned nt, unsigned bx) {
	if (nt > emu_cap) {
		free(emu_ctx);
		free(emu_stacks);
		free(emu_done);
		emu_ctx = calloc(nt, sizeof *emu_ctx);
		emu_stacks = malloc((size_t)nt * EMU_STACK);
		emu_done = calloc(nt, sizeof *emu_done);
		if (!emu_ctx || !emu_stacks || !emu_done) { emu_cap = 0; return -2; }
		emu_cap = nt;
	}
	for (unsigned t = 0; t < nt; t++) {
		getcontext(&emu_ctx[t]);
		emu_ctx[t].uc_stack.ss_sp = emu_stacks + (size_t)t * EMU_STACK;
		emu_ctx[t].uc_stack.ss_size = EMU_STACK;
		emu_ctx[t].uc_link = &emu_sched;
		makecontext(&emu_ctx[t], emu_tramp, 0);
		emu_done[t] = 0;
	}
	for (unsigned left = nt; left > 0;) {
		left = 0;
		for (unsigned t = 0; t < nt; t++) {
			if (emu_done[t]) continue;
			emu_cur = t;
			emu_self = &emu_ctx[t];
			threadIdx.x = t % bx; threadIdx.y = t / bx; threadIdx.z = 0;
			swapcontext(&emu_sched, &emu_ctx[t]);
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
// CPU, one at a time.
type Device struct {
	mu    sync.Mutex
	alloc map[uint64]bool
}

// New returns an emulated device.
func New() *Device { return &Device{alloc: map[uint64]bool{}} }

// Alloc returns bytes of zeroed memory.
func (d *Device) Alloc(bytes int) (uint64, error) {
	p := uint64(C.emu_alloc(C.size_t(max(bytes, 4))))
	if p == 0 {
		return 0, fmt.Errorf("cudaemu: out of host memory for %d bytes", bytes)
	}
	d.mu.Lock()
	d.alloc[p] = true
	d.mu.Unlock()
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
	if len(src) > 0 {
		C.emu_htod(C.uint64_t(dst), (*C.float)(unsafe.Pointer(&src[0])), C.size_t(4*len(src)))
	}
	return nil
}

// DtoH copies from device address src to dst.
func (d *Device) DtoH(dst []float32, src uint64) error {
	if len(dst) > 0 {
		C.emu_dtoh((*C.float)(unsafe.Pointer(&dst[0])), C.uint64_t(src), C.size_t(4*len(dst)))
	}
	return nil
}

// Launch runs kernel name on a gx×gy grid of bx×by blocks with the
// arguments packed as the real driver takes them (8-byte slots).
func (d *Device) Launch(name string, gx, gy, bx, by int, args []uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
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
