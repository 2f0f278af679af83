//go:build cgo && (linux || windows)

package exec

import (
	"errors"
	"strings"
	"testing"
)

// TestNoDriverLibrary: a CUDA driver library that cannot be loaded is
// ErrNoDriver, naming the library and the loader's reason, on every
// platform (libcuda.so.1 through dlopen, nvcuda.dll through LoadLibraryEx).
func TestNoDriverLibrary(t *testing.T) {
	const missing = "gpuwizard-no-such-cuda-driver"
	_, err := openNamed(missing)
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("loading a missing driver library: want ErrNoDriver, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, missing) || !strings.Contains(msg, "could not be loaded (") {
		t.Errorf("the error should name the library and why: %q", msg)
	}
	t.Log(err)
}

// TestOpenCUDAWithoutDriver: where the driver library is absent (CI, Wine),
// OpenCUDA is ErrNoCUDA wrapping ErrNoDriver and names the platform's
// library; with a driver, loading it must work.
func TestOpenCUDAWithoutDriver(t *testing.T) {
	lib, err := openLib()
	if err == nil {
		lib.close()
		t.Logf("%s loads here", driverLibrary)
		return
	}
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), driverLibrary) {
		t.Fatalf("%s failed to load, but not as ErrNoDriver naming it: %v", driverLibrary, err)
	}
	_, err = OpenCUDA(0)
	if !errors.Is(err, ErrNoCUDA) || !errors.Is(err, ErrNoDriver) {
		t.Fatalf("OpenCUDA without %s: want ErrNoCUDA and ErrNoDriver, got %v", driverLibrary, err)
	}
	t.Log(err)
}
