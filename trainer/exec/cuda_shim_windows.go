//go:build cgo

package exec

/*
#include <windows.h>
#include <stdio.h>

// cuBLAS of CUDA 13, 12 and 11 (the toolkit's bin folder is on PATH, or a
// copy sits next to the program).
const char *const gw_blas_libs[] = {"cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll", NULL};

// The driver's nvcuda.dll is loaded from System32 only, where the NVIDIA
// driver installs it: never from the current folder or PATH.
void *gw_dl_open(const char *name, int driver) {
	return (void *)LoadLibraryExA(name, NULL, driver ? LOAD_LIBRARY_SEARCH_SYSTEM32 : 0);
}

void *gw_dl_sym(void *lib, const char *name) { return (void *)GetProcAddress((HMODULE)lib, name); }

void gw_dl_close(void *lib) { FreeLibrary((HMODULE)lib); }

void gw_dl_error(char *err, int errlen) {
	DWORD code = GetLastError();
	char msg[256] = "";
	DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, msg, sizeof msg, NULL);
	while (n > 0 && (msg[n - 1] == '\r' || msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.')) msg[--n] = 0;
	snprintf(err, errlen, "Windows error %lu: %s", (unsigned long)code, n ? msg : "no description");
}
*/
import "C"

// driverLibrary is the CUDA driver: the NVIDIA driver installs it in
// System32.
const driverLibrary = "nvcuda.dll"
