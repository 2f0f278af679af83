// A CPU stand-in for the CUDA built-ins kernels.cu uses, so the same
// source compiles as C and runs on the host. All GPU threads run on the
// calling OS thread: in kernels that synchronise, each GPU thread is a
// coroutine (ucontext) that yields to a scheduler at __syncthreads; the
// others run one after another.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

typedef struct { unsigned x, y, z; } emu_dim3;

static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
static ucontext_t emu_sched, *emu_self;

#define __global__
#define __device__
#define __forceinline__ static inline
#define __shared__ static

static void __syncthreads(void) { swapcontext(emu_self, &emu_sched); }

static float __int_as_float(int i) {
	float f;
	memcpy(&f, &i, sizeof f);
	return f;
}

static float atomicAdd(float *p, float v) { // one OS thread: a plain add
	float old = *p;
	*p = old + v;
	return old;
}
