// A CPU stand-in for the CUDA built-ins kernels.cu uses, so the same
// source compiles as C and runs on the host. All GPU threads run on the
// calling OS thread: in kernels that synchronise, each GPU thread is a
// coroutine that yields to a scheduler at barriers and shuffles; the
// others run one after another.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned x, y, z; } emu_dim3;

static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ static inline
#define __shared__ static

// The block's scheduling state (see emu.go): how many of its threads have
// returned, how many wait at the current barrier and its generation, and
// the lanes' values for warp shuffles (two sets, alternating per thread).
static unsigned emu_nt, emu_ndone, emu_arrived, emu_gen;
static float *emu_lane[2];
static unsigned *emu_shfl_count;
static unsigned emu_tid(void) { return threadIdx.y * blockDim.x + threadIdx.x; }

static void emu_yield(void); // back to the block's scheduler (emu.go)

// __syncthreads is a barrier: a thread yields until every thread of the
// block that has not returned has arrived.
static void __syncthreads(void) {
	unsigned gen = emu_gen;
	if (++emu_arrived == emu_nt - emu_ndone) {
		emu_arrived = 0;
		emu_gen++;
		return;
	}
	while (emu_gen == gen) emu_yield();
}

// __shfl_down_sync: each lane publishes v, yields once (the scheduler runs
// every thread of the block in ascending order each round, so every lane
// of the warp has published by the time it resumes), then reads the lane
// delta above it; lanes beyond the warp get their own v back. A lane's
// shuffles alternate between two sets of slots, so a lane that has moved
// on to its next shuffle never overwrites a value a lower lane still
// reads.
static float __shfl_down_sync(unsigned mask, float v, int delta) {
	(void)mask;
	unsigned t = emu_tid(), set = emu_shfl_count[t]++ & 1;
	emu_lane[set][t] = v;
	emu_yield();
	unsigned lane = t & 31;
	if (lane + (unsigned)delta >= 32 || t + (unsigned)delta >= emu_nt) return v;
	return emu_lane[set][t + delta];
}

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
