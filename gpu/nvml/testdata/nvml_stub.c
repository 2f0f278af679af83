/*
 * A stand-in nvml.dll for the tests of gpu/nvml's Windows binding under
 * Wine (make test-windows builds it with mingw, three ways):
 *
 *   -DSTUB_GPU   a machine with one GPU and a current driver: the newest
 *                function names (_v2, _v3) and nvmlProcessInfo_v2_t;
 *   -DSTUB_OLD   the same GPU with an old driver: only the first function
 *                names, nvmlProcessInfo_v1_t, no CUDA version _v2 and no
 *                clock event reasons;
 *   -DSTUB_NONE  a machine whose driver is not loaded: nvmlInit_v2 answers
 *                NVML_ERROR_DRIVER_NOT_LOADED.
 *
 * The structs are declared as nvml.h declares them, so the compiler lays
 * them out as the real library does; the Go side's hand-made layouts are
 * checked against the values written here.
 */
#include <string.h>

#define API __declspec(dllexport)

typedef int nvmlReturn_t;
typedef struct stub_device *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

/* The sizes the Go side declares; a mismatch stops the build. */
typedef char check_memory[sizeof(nvmlMemory_t) == 24 ? 1 : -1];
typedef char check_util[sizeof(nvmlUtilization_t) == 8 ? 1 : -1];
typedef char check_pci[sizeof(nvmlPciInfo_t) == 68 ? 1 : -1];
typedef char check_proc1[sizeof(nvmlProcessInfo_v1_t) == 16 ? 1 : -1];
typedef char check_proc2[sizeof(nvmlProcessInfo_v2_t) == 24 ? 1 : -1];

struct stub_device { int index; };
static struct stub_device gpu0 = {0};
static int started;

static nvmlReturn_t copy_text(char *buf, unsigned int len, const char *s)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return NVML_SUCCESS;
}

static nvmlReturn_t init(void)
{
#ifdef STUB_NONE
	return NVML_ERROR_DRIVER_NOT_LOADED;
#else
	started++;
	return NVML_SUCCESS;
#endif
}

static nvmlReturn_t count(unsigned int *n)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	*n = 1;
	return NVML_SUCCESS;
}

static nvmlReturn_t handle(unsigned int i, nvmlDevice_t *d)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	if (i != 0) return NVML_ERROR_INVALID_ARGUMENT;
	*d = &gpu0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	started--;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) { return copy_text(v, len, "591.44"); }
API nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len) { return copy_text(v, len, "13.591.44"); }

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	*v = 13000;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *v, unsigned int len)
{
	return d == &gpu0 ? copy_text(v, len, "NVIDIA GeForce RTX 3060") : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *v, unsigned int len)
{
	return d == &gpu0 ? copy_text(v, len, "GPU-3c1b2a9d-0000-4e5f-8a7b-112233445566") : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	*major = 8;
	*minor = 6;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	m->total = 12ull << 30;
	m->free = 11ull << 30;
	m->used = 1ull << 30;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	u->gpu = 42;
	u->memory = 17;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
	if (d != &gpu0 || sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
	*t = 55;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	*mw = 123456;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *m)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	*m = 0x4; /* software power cap */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pending)
{
	(void)cur;
	(void)pending;
	return d == &gpu0 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT; /* a GeForce */
}

/* Two processes: one with its memory known, one under WDDM (-1). The
 * protocol: too little room → INSUFFICIENT_SIZE and the count needed. */
#define FILL_PROCESSES(type)                                   \
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;        \
	if (*n < 2) {                                              \
		*n = 2;                                                \
		return NVML_ERROR_INSUFFICIENT_SIZE;                   \
	}                                                          \
	memset(p, 0xEE, *n * sizeof(type));                        \
	p[0].pid = 4242;                                           \
	p[0].usedGpuMemory = 3ull << 30;                           \
	p[1].pid = 777;                                            \
	p[1].usedGpuMemory = ~0ull;                                \
	*n = 2;                                                    \
	return NVML_SUCCESS

#ifdef STUB_OLD
API nvmlReturn_t nvmlInit(void) { return init(); }
API nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return count(n); }
API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return handle(i, d); }

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	FILL_PROCESSES(nvmlProcessInfo_v1_t);
}
#else
API nvmlReturn_t nvmlInit_v2(void) { return init(); }
API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return count(n); }
API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return handle(i, d); }

API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	if (!started) return NVML_ERROR_UNINITIALIZED;
	*v = 13010;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	memset(p, 0, sizeof *p);
	strcpy(p->busIdLegacy, "0000:01:00.0");
	p->bus = 1;
	p->pciDeviceId = 0x250310DE;
	p->pciSubSystemId = 0x397D1462;
	strcpy(p->busId, "00000000:01:00.0");
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *m)
{
	if (d != &gpu0) return NVML_ERROR_INVALID_ARGUMENT;
	*m = 0x44; /* software power cap, hardware thermal slowdown */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v2_t *p)
{
	FILL_PROCESSES(nvmlProcessInfo_v2_t);
}
#endif
