//go:build cgo && (linux || windows)

package exec

/*
#cgo linux LDFLAGS: -ldl
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef int gwres;
typedef unsigned long long gwptr;

#define GW_EVENTS 8

// The dynamic loader of the platform (cuda_shim_linux.go: dlopen;
// cuda_shim_windows.go: LoadLibraryEx). gw_dl_open's driver flag marks
// the CUDA driver itself (on Windows it is looked for in System32 only);
// gw_dl_error writes why the last gw_dl_open failed.
extern const char *const gw_blas_libs[];
void *gw_dl_open(const char *name, int driver);
void *gw_dl_sym(void *lib, const char *name);
void gw_dl_close(void *lib);
void gw_dl_error(char *err, int errlen);

// Driver API entry points, looked up by explicit versioned names so that
// one binary works with every driver from CUDA 11 to 13.
typedef struct {
	void *lib, *blas, *handle, *ctx;
	gwres (*cuInit)(unsigned);
	gwres (*cuDriverGetVersion)(int*);
	gwres (*cuDeviceGetCount)(int*);
	gwres (*cuDeviceGet)(int*, int);
	gwres (*cuDeviceGetName)(char*, int, int);
	gwres (*cuDeviceGetAttribute)(int*, int, int);
	gwres (*cuDeviceTotalMem)(size_t*, int);
	gwres (*cuDevicePrimaryCtxRetain)(void**, int);
	gwres (*cuDevicePrimaryCtxRelease)(int);
	gwres (*cuCtxSetCurrent)(void*);
	gwres (*cuCtxSynchronize)(void);
	gwres (*cuMemAlloc)(gwptr*, size_t);
	gwres (*cuMemFree)(gwptr);
	gwres (*cuMemcpyHtoD)(gwptr, const void*, size_t);
	gwres (*cuMemcpyDtoH)(void*, gwptr, size_t);
	gwres (*cuMemGetInfo)(size_t*, size_t*);
	gwres (*cuModuleLoadData)(void**, const void*);
	gwres (*cuModuleGetFunction)(void**, void*, const char*);
	gwres (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, void*, void**, void**);
	gwres (*cuGetErrorName)(gwres, const char**);
	int (*cublasCreate)(void**);
	int (*cublasDestroy)(void*);
	int (*cublasSgemm)(void*, int, int, int, int, int, const float*, const float*, int,
		const float*, int, const float*, float*, int);
	int (*cublasSetStream)(void*, void*);
	int (*cublasSetWorkspace)(void*, void*, size_t); // optional
	int device;
	// The queue every copy, kernel and GEMM goes to, and its events.
	void *stream;
	void *events[GW_EVENTS];
	gwptr blasWork;
	gwres (*cuStreamCreate)(void**, unsigned);
	gwres (*cuStreamDestroy)(void*);
	gwres (*cuStreamSynchronize)(void*);
	gwres (*cuMemcpyHtoDAsync)(gwptr, const void*, size_t, void*);
	gwres (*cuMemcpyDtoHAsync)(void*, gwptr, size_t, void*);
	gwres (*cuMemAllocHost)(void**, size_t);
	gwres (*cuMemFreeHost)(void*);
	gwres (*cuEventCreate)(void**, unsigned);
	gwres (*cuEventDestroy)(void*);
	gwres (*cuEventRecord)(void*, void*);
	gwres (*cuEventSynchronize)(void*);
	// CUDA graphs (optional: without them every step runs eagerly).
	// cuGraphInstantiate is cuGraphInstantiateWithFlags in CUDA 12 and 13
	// (11.4 and newer have it); older drivers have cuGraphInstantiate_v2.
	gwres (*cuStreamBeginCapture)(void*, int);
	gwres (*cuStreamEndCapture)(void*, void**);
	gwres (*cuGraphInstantiateWithFlags)(void**, void*, unsigned long long);
	gwres (*cuGraphInstantiate_v2)(void**, void*, void**, char*, size_t);
	gwres (*cuGraphLaunch)(void*, void*);
	gwres (*cuGraphExecDestroy)(void*);
	gwres (*cuGraphDestroy)(void*);
} gwcuda;

static void *gw_sym(void *lib, const char *name, int *missing) {
	void *p = gw_dl_sym(lib, name);
	if (!p) *missing = 1;
	return p;
}

// gw_open loads the driver library name (libcuda.so.1, nvcuda.dll) and,
// when present, cuBLAS. It returns NULL with a message in err (size
// errlen) and *absent set when the driver library cannot be loaded, or
// with *absent 0 when it lacks a symbol.
static gwcuda *gw_open(const char *name, char *err, int errlen, int *absent) {
	void *lib = gw_dl_open(name, 1);
	*absent = lib == NULL;
	if (!lib) {
		gw_dl_error(err, errlen);
		return NULL;
	}
	gwcuda *c = calloc(1, sizeof(gwcuda));
	c->lib = lib;
	int m = 0;
	c->cuInit = gw_sym(lib, "cuInit", &m);
	c->cuDriverGetVersion = gw_sym(lib, "cuDriverGetVersion", &m);
	c->cuDeviceGetCount = gw_sym(lib, "cuDeviceGetCount", &m);
	c->cuDeviceGet = gw_sym(lib, "cuDeviceGet", &m);
	c->cuDeviceGetName = gw_sym(lib, "cuDeviceGetName", &m);
	c->cuDeviceGetAttribute = gw_sym(lib, "cuDeviceGetAttribute", &m);
	c->cuDeviceTotalMem = gw_sym(lib, "cuDeviceTotalMem_v2", &m);
	c->cuDevicePrimaryCtxRetain = gw_sym(lib, "cuDevicePrimaryCtxRetain", &m);
	c->cuDevicePrimaryCtxRelease = gw_sym(lib, "cuDevicePrimaryCtxRelease_v2", &m);
	c->cuCtxSetCurrent = gw_sym(lib, "cuCtxSetCurrent", &m);
	c->cuCtxSynchronize = gw_sym(lib, "cuCtxSynchronize", &m);
	c->cuMemAlloc = gw_sym(lib, "cuMemAlloc_v2", &m);
	c->cuMemFree = gw_sym(lib, "cuMemFree_v2", &m);
	c->cuMemcpyHtoD = gw_sym(lib, "cuMemcpyHtoD_v2", &m);
	c->cuMemcpyDtoH = gw_sym(lib, "cuMemcpyDtoH_v2", &m);
	c->cuMemGetInfo = gw_sym(lib, "cuMemGetInfo_v2", &m);
	c->cuModuleLoadData = gw_sym(lib, "cuModuleLoadData", &m);
	c->cuModuleGetFunction = gw_sym(lib, "cuModuleGetFunction", &m);
	c->cuLaunchKernel = gw_sym(lib, "cuLaunchKernel", &m);
	c->cuGetErrorName = gw_sym(lib, "cuGetErrorName", &m);
	c->cuStreamCreate = gw_sym(lib, "cuStreamCreate", &m);
	c->cuStreamDestroy = gw_sym(lib, "cuStreamDestroy_v2", &m);
	c->cuStreamSynchronize = gw_sym(lib, "cuStreamSynchronize", &m);
	c->cuMemcpyHtoDAsync = gw_sym(lib, "cuMemcpyHtoDAsync_v2", &m);
	c->cuMemcpyDtoHAsync = gw_sym(lib, "cuMemcpyDtoHAsync_v2", &m);
	c->cuMemAllocHost = gw_sym(lib, "cuMemAllocHost_v2", &m);
	c->cuMemFreeHost = gw_sym(lib, "cuMemFreeHost", &m);
	c->cuEventCreate = gw_sym(lib, "cuEventCreate", &m);
	c->cuEventDestroy = gw_sym(lib, "cuEventDestroy_v2", &m);
	c->cuEventRecord = gw_sym(lib, "cuEventRecord", &m);
	c->cuEventSynchronize = gw_sym(lib, "cuEventSynchronize", &m);
	int gm = 0;
	c->cuStreamBeginCapture = gw_sym(lib, "cuStreamBeginCapture_v2", &gm);
	c->cuStreamEndCapture = gw_sym(lib, "cuStreamEndCapture", &gm);
	c->cuGraphLaunch = gw_sym(lib, "cuGraphLaunch", &gm);
	c->cuGraphExecDestroy = gw_sym(lib, "cuGraphExecDestroy", &gm);
	c->cuGraphDestroy = gw_sym(lib, "cuGraphDestroy", &gm);
	int wf = 0, v2 = 0;
	c->cuGraphInstantiateWithFlags = gw_sym(lib, "cuGraphInstantiateWithFlags", &wf);
	c->cuGraphInstantiate_v2 = gw_sym(lib, "cuGraphInstantiate_v2", &v2);
	if (gm || (wf && v2)) {
		c->cuStreamBeginCapture = NULL; // no graphs: eager steps
	}
	if (m) {
		snprintf(err, errlen, "%s lacks a driver API function gpuwizard needs (driver too old?)", name);
		gw_dl_close(lib);
		free(c);
		return NULL;
	}
	for (int i = 0; gw_blas_libs[i] && !c->blas; i++) {
		c->blas = gw_dl_open(gw_blas_libs[i], 0);
	}
	if (c->blas) {
		int bm = 0;
		c->cublasCreate = gw_sym(c->blas, "cublasCreate_v2", &bm);
		c->cublasDestroy = gw_sym(c->blas, "cublasDestroy_v2", &bm);
		c->cublasSgemm = gw_sym(c->blas, "cublasSgemm_v2", &bm);
		c->cublasSetStream = gw_sym(c->blas, "cublasSetStream_v2", &bm);
		int wm = 0;
		c->cublasSetWorkspace = gw_sym(c->blas, "cublasSetWorkspace_v2", &wm);
		if (bm) {
			gw_dl_close(c->blas);
			c->blas = NULL;
		}
	}
	return c;
}

static const char *gw_errname(gwcuda *c, gwres r) {
	const char *s = NULL;
	if (c && c->cuGetErrorName && c->cuGetErrorName(r, &s) == 0 && s) return s;
	return "CUDA_ERROR_UNKNOWN";
}

static gwres gw_init(gwcuda *c) { return c->cuInit(0); }
static gwres gw_driver_version(gwcuda *c, int *v) { return c->cuDriverGetVersion(v); }
static gwres gw_count(gwcuda *c, int *n) { return c->cuDeviceGetCount(n); }

// gw_device selects device ordinal and makes its primary context current.
static gwres gw_device(gwcuda *c, int ordinal, char *name, int namelen, int *major, int *minor, int *sms, size_t *mem) {
	int dev;
	gwres r = c->cuDeviceGet(&dev, ordinal);
	if (r) return r;
	if ((r = c->cuDeviceGetName(name, namelen, dev))) return r;
	if ((r = c->cuDeviceGetAttribute(major, 75, dev))) return r; // COMPUTE_CAPABILITY_MAJOR
	if ((r = c->cuDeviceGetAttribute(minor, 76, dev))) return r; // COMPUTE_CAPABILITY_MINOR
	if ((r = c->cuDeviceGetAttribute(sms, 16, dev))) return r;   // MULTIPROCESSOR_COUNT
	if ((r = c->cuDeviceTotalMem(mem, dev))) return r;
	if ((r = c->cuDevicePrimaryCtxRetain(&c->ctx, dev))) return r;
	c->device = dev;
	if ((r = c->cuCtxSetCurrent(c->ctx))) return r;
	if ((r = c->cuStreamCreate(&c->stream, 1))) return r; // CU_STREAM_NON_BLOCKING
	for (int i = 0; i < GW_EVENTS; i++)
		if ((r = c->cuEventCreate(&c->events[i], 2))) return r; // CU_EVENT_DISABLE_TIMING
	return 0;
}

// CUDA contexts are current per OS thread and goroutines move between
// threads, so every call below makes the primary context current first
// (a thread-local store in the driver).
#define CUR(c) do { gwres _r = (c)->cuCtxSetCurrent((c)->ctx); if (_r) return _r; } while (0)

// gw_blas_create makes cuBLAS's handle, on the backend's stream, with a
// workspace of its own (32 MiB, what Hopper wants) where cuBLAS lets one
// be set: a GEMM captured in a graph must not allocate.
static int gw_blas_create(gwcuda *c) {
	if (!c->blas) return -1;
	if (c->cuCtxSetCurrent(c->ctx)) return -1;
	int r = c->cublasCreate(&c->handle);
	if (r) return r;
	if ((r = c->cublasSetStream(c->handle, c->stream))) return r;
	if (c->cublasSetWorkspace && c->cuMemAlloc(&c->blasWork, 32 << 20) == 0) {
		if (c->cublasSetWorkspace(c->handle, (void *)(uintptr_t)c->blasWork, 32 << 20)) {
			c->cuMemFree(c->blasWork);
			c->blasWork = 0;
		}
	}
	return 0;
}

static void gw_close(gwcuda *c) {
	if (c->ctx) c->cuCtxSetCurrent(c->ctx);
	if (c->stream) c->cuStreamSynchronize(c->stream);
	if (c->handle) c->cublasDestroy(c->handle);
	if (c->blasWork) c->cuMemFree(c->blasWork);
	for (int i = 0; i < GW_EVENTS; i++)
		if (c->events[i]) c->cuEventDestroy(c->events[i]);
	if (c->stream) c->cuStreamDestroy(c->stream);
	if (c->ctx) c->cuDevicePrimaryCtxRelease(c->device);
	free(c);
}

static gwres gw_alloc(gwcuda *c, gwptr *p, size_t n) { CUR(c); return c->cuMemAlloc(p, n); }
static gwres gw_free(gwcuda *c, gwptr p) { CUR(c); return c->cuMemFree(p); }
// Copies from and to pageable memory go on the stream too (in order with
// the kernels) and wait for it.
static gwres gw_htod(gwcuda *c, gwptr d, const void *s, size_t n) {
	CUR(c);
	gwres r = c->cuMemcpyHtoDAsync(d, s, n, c->stream);
	return r ? r : c->cuStreamSynchronize(c->stream);
}
static gwres gw_dtoh(gwcuda *c, void *d, gwptr s, size_t n) {
	CUR(c);
	gwres r = c->cuMemcpyDtoHAsync(d, s, n, c->stream);
	return r ? r : c->cuStreamSynchronize(c->stream);
}
static gwres gw_sync(gwcuda *c) { CUR(c); return c->cuStreamSynchronize(c->stream); }

// Page-locked host memory, copies from and to it queued without waiting,
// events, and graphs.
static gwres gw_host_alloc(gwcuda *c, void **p, size_t n) { CUR(c); return c->cuMemAllocHost(p, n); }
static gwres gw_host_free(gwcuda *c, void *p) { CUR(c); return c->cuMemFreeHost(p); }
static gwres gw_htod_async(gwcuda *c, gwptr d, const void *s, size_t n) { CUR(c); return c->cuMemcpyHtoDAsync(d, s, n, c->stream); }
static gwres gw_dtoh_async(gwcuda *c, void *d, gwptr s, size_t n) { CUR(c); return c->cuMemcpyDtoHAsync(d, s, n, c->stream); }
static gwres gw_record(gwcuda *c, int ev) { CUR(c); return c->cuEventRecord(c->events[ev], c->stream); }
static gwres gw_wait(gwcuda *c, int ev) { CUR(c); return c->cuEventSynchronize(c->events[ev]); }
static int gw_can_capture(gwcuda *c) { return c->cuStreamBeginCapture != NULL; }
static gwres gw_begin_capture(gwcuda *c) { CUR(c); return c->cuStreamBeginCapture(c->stream, 2); } // CU_STREAM_CAPTURE_MODE_RELAXED
static gwres gw_end_capture(gwcuda *c, uint64_t *handle) {
	void *e = NULL;
	void **exec = &e;
	CUR(c);
	void *g = NULL;
	gwres r = c->cuStreamEndCapture(c->stream, &g);
	if (r) return r;
	if (c->cuGraphInstantiateWithFlags) r = c->cuGraphInstantiateWithFlags(exec, g, 0);
	else r = c->cuGraphInstantiate_v2(exec, g, NULL, NULL, 0);
	c->cuGraphDestroy(g);
	*handle = (uint64_t)(uintptr_t)e;
	return r;
}
static gwres gw_graph_launch(gwcuda *c, uint64_t g) { CUR(c); return c->cuGraphLaunch((void *)(uintptr_t)g, c->stream); }
static gwres gw_graph_drop(gwcuda *c, uint64_t g) { CUR(c); return c->cuGraphExecDestroy((void *)(uintptr_t)g); }
static gwres gw_meminfo(gwcuda *c, size_t *fr, size_t *tot) { CUR(c); return c->cuMemGetInfo(fr, tot); }
static gwres gw_module(gwcuda *c, void **mod, const char *ptx) { CUR(c); return c->cuModuleLoadData(mod, ptx); }
static gwres gw_function(gwcuda *c, void **f, void *mod, const char *name) {
	return c->cuModuleGetFunction(f, mod, name);
}

// gw_launch passes nargs 8-byte argument slots (ints and floats in the low
// bytes, little-endian) on the backend's stream.
static gwres gw_launch(gwcuda *c, void *f, unsigned gx, unsigned gy, unsigned bx, unsigned by, int nargs, uint64_t *vals) {
	CUR(c);
	void *params[16];
	for (int i = 0; i < nargs && i < 16; i++) params[i] = &vals[i];
	return c->cuLaunchKernel(f, gx, gy, 1, bx, by, 1, 0, c->stream, params, NULL);
}

static int gw_sgemm(gwcuda *c, int opB, int opA, int n, int m, int k, gwptr B, int ldb, gwptr A, int lda,
	float beta, gwptr C, int ldc) {
	float one = 1.f;
	if (c->cuCtxSetCurrent(c->ctx)) return -1;
	return c->cublasSgemm(c->handle, opB, opA, n, m, k, &one, (const float*)B, ldb, (const float*)A, lda,
		&beta, (float*)C, ldc);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cudaLib is the loaded driver (and cuBLAS) with a current primary context.
type cudaLib struct {
	c *C.gwcuda
}

func (l *cudaLib) check(call string, r C.gwres) error {
	if r == 0 {
		return nil
	}
	return &cuError{call: call, code: int(r), name: C.GoString(C.gw_errname(l.c, r))}
}

// openLib loads the platform's CUDA driver library (driverLibrary).
func openLib() (*cudaLib, error) { return openNamed(driverLibrary) }

// openNamed loads the driver library name; ErrNoDriver when it cannot be
// loaded at all.
func openNamed(name string) (*cudaLib, error) {
	buf := make([]byte, 512)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var absent C.int
	c := C.gw_open(cname, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), &absent)
	if c == nil {
		why := C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
		if absent != 0 {
			return nil, noDriver(name, why)
		}
		return nil, fmt.Errorf("%s", why)
	}
	return &cudaLib{c: c}, nil
}

func (l *cudaLib) init() error { return l.check("cuInit", C.gw_init(l.c)) }

func (l *cudaLib) driverVersion() (int, error) {
	var v C.int
	err := l.check("cuDriverGetVersion", C.gw_driver_version(l.c, &v))
	return int(v), err
}

func (l *cudaLib) count() (int, error) {
	var n C.int
	err := l.check("cuDeviceGetCount", C.gw_count(l.c, &n))
	return int(n), err
}

func (l *cudaLib) device(ordinal int) (name string, major, minor, sms int, mem uint64, err error) {
	buf := make([]byte, 256)
	var ma, mi, sm C.int
	var m C.size_t
	r := C.gw_device(l.c, C.int(ordinal), (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), &ma, &mi, &sm, &m)
	if err := l.check("cuDevicePrimaryCtxRetain", r); err != nil {
		return "", 0, 0, 0, 0, err
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), int(ma), int(mi), int(sm), uint64(m), nil
}

func (l *cudaLib) blas() bool { return C.gw_blas_create(l.c) == 0 }

func (l *cudaLib) close() { C.gw_close(l.c) }

func (l *cudaLib) alloc(bytes int) (uint64, error) {
	var p C.gwptr
	err := l.check("cuMemAlloc", C.gw_alloc(l.c, &p, C.size_t(bytes)))
	return uint64(p), err
}

func (l *cudaLib) free(p uint64) { C.gw_free(l.c, C.gwptr(p)) }

func (l *cudaLib) htod(dst uint64, src []float32) error {
	if len(src) == 0 {
		return nil
	}
	return l.check("cuMemcpyHtoD", C.gw_htod(l.c, C.gwptr(dst), unsafe.Pointer(&src[0]), C.size_t(4*len(src))))
}

func (l *cudaLib) dtoh(dst []float32, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return l.check("cuMemcpyDtoH", C.gw_dtoh(l.c, unsafe.Pointer(&dst[0]), C.gwptr(src), C.size_t(4*len(dst))))
}

func (l *cudaLib) sync() error { return l.check("cuStreamSynchronize", C.gw_sync(l.c)) }

// hostAlloc returns n floats of page-locked host memory (C memory: the Go
// collector neither moves nor frees it).
func (l *cudaLib) hostAlloc(n int) ([]float32, error) {
	var p unsafe.Pointer
	if err := l.check("cuMemAllocHost", C.gw_host_alloc(l.c, &p, C.size_t(4*max(n, 1)))); err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(p), max(n, 1))[:n], nil
}

func (l *cudaLib) hostFree(h []float32) {
	if cap(h) > 0 {
		C.gw_host_free(l.c, unsafe.Pointer(unsafe.SliceData(h[:1])))
	}
}

func (l *cudaLib) htodAsync(dst uint64, src []float32) error {
	if len(src) == 0 {
		return nil
	}
	return l.check("cuMemcpyHtoDAsync", C.gw_htod_async(l.c, C.gwptr(dst), unsafe.Pointer(&src[0]), C.size_t(4*len(src))))
}

func (l *cudaLib) dtohAsync(dst []float32, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return l.check("cuMemcpyDtoHAsync", C.gw_dtoh_async(l.c, unsafe.Pointer(&dst[0]), C.gwptr(src), C.size_t(4*len(dst))))
}

func (l *cudaLib) record(ev int) error { return l.check("cuEventRecord", C.gw_record(l.c, C.int(ev))) }
func (l *cudaLib) wait(ev int) error   { return l.check("cuEventSynchronize", C.gw_wait(l.c, C.int(ev))) }
func (l *cudaLib) canCapture() bool    { return C.gw_can_capture(l.c) != 0 }
func (l *cudaLib) beginCapture() error {
	return l.check("cuStreamBeginCapture", C.gw_begin_capture(l.c))
}

func (l *cudaLib) endCapture() (uint64, error) {
	var h C.uint64_t
	if err := l.check("cuStreamEndCapture/cuGraphInstantiate", C.gw_end_capture(l.c, &h)); err != nil {
		return 0, err
	}
	return uint64(h), nil
}

func (l *cudaLib) graphLaunch(g uint64) error {
	return l.check("cuGraphLaunch", C.gw_graph_launch(l.c, C.uint64_t(g)))
}

func (l *cudaLib) graphDrop(g uint64) { C.gw_graph_drop(l.c, C.uint64_t(g)) }

func (l *cudaLib) memInfo() (free, total uint64, err error) {
	var f, t C.size_t
	err = l.check("cuMemGetInfo", C.gw_meminfo(l.c, &f, &t))
	return uint64(f), uint64(t), err
}

// module loads PTX text and returns its functions by name.
func (l *cudaLib) module(ptx string, names []string) (map[string]unsafe.Pointer, error) {
	cs := C.CString(ptx)
	defer C.free(unsafe.Pointer(cs))
	var mod unsafe.Pointer
	if err := l.check("cuModuleLoadData", C.gw_module(l.c, &mod, cs)); err != nil {
		return nil, err
	}
	out := map[string]unsafe.Pointer{}
	for _, n := range names {
		cn := C.CString(n)
		var f unsafe.Pointer
		err := l.check("cuModuleGetFunction("+n+")", C.gw_function(l.c, &f, mod, cn))
		C.free(unsafe.Pointer(cn))
		if err != nil {
			return nil, err
		}
		out[n] = f
	}
	return out, nil
}

func (l *cudaLib) launch(f unsafe.Pointer, gx, gy, bx, by int, args []uint64) error {
	return l.check("cuLaunchKernel", C.gw_launch(l.c, f, C.uint(gx), C.uint(gy), C.uint(bx), C.uint(by),
		C.int(len(args)), (*C.uint64_t)(unsafe.Pointer(&args[0]))))
}

// sgemm computes row-major C (m×n) = op(A)·op(B) + beta·C with cuBLAS
// (column-major): Cᵀ = op(B)ᵀ·op(A)ᵀ.
func (l *cudaLib) sgemm(ta, tb bool, m, n, k int, a, b, c uint64, beta float32) error {
	opA, lda := 0, k
	if ta {
		opA, lda = 1, m
	}
	opB, ldb := 0, n
	if tb {
		opB, ldb = 1, k
	}
	r := C.gw_sgemm(l.c, C.int(opB), C.int(opA), C.int(n), C.int(m), C.int(k), C.gwptr(b), C.int(ldb),
		C.gwptr(a), C.int(lda), C.float(beta), C.gwptr(c), C.int(n))
	if r != 0 {
		return fmt.Errorf("cublasSgemm_v2: status %d", int(r))
	}
	return nil
}
