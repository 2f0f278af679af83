//go:build cgo

package exec

/*
#include <dlfcn.h>
#include <stdio.h>

// cuBLAS of CUDA 13, 12 and 11, found as the dynamic linker finds
// libraries (LD_LIBRARY_PATH, the ldconfig cache).
const char *const gw_blas_libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", NULL};

void *gw_dl_open(const char *name, int driver) {
	(void)driver;
	return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

void *gw_dl_sym(void *lib, const char *name) { return dlsym(lib, name); }

void gw_dl_close(void *lib) { dlclose(lib); }

void gw_dl_error(char *err, int errlen) {
	const char *e = dlerror();
	snprintf(err, errlen, "%s", e ? e : "unknown dlopen error");
}
*/
import "C"

// driverLibrary is the CUDA driver: the NVIDIA driver installs it.
const driverLibrary = "libcuda.so.1"
