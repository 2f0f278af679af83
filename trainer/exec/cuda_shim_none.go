//go:build !cgo || !(linux || windows)

package exec

import "unsafe"

// Without cgo (CGO_ENABLED=0) or on a platform without a CUDA driver
// binding, the driver cannot be loaded: OpenCUDA fails with ErrNoDriver
// and the trainer uses the CPU. cudaLib's methods exist for cuda.go and
// are never reached.
type cudaLib struct{}

const driverLibrary = "the CUDA driver library"

func openLib() (*cudaLib, error) {
	return nil, noDriver(driverLibrary, "this gpuwizard was built without cgo, which loading it needs")
}

func (*cudaLib) init() error                 { return ErrNoDriver }
func (*cudaLib) driverVersion() (int, error) { return 0, ErrNoDriver }
func (*cudaLib) count() (int, error)         { return 0, ErrNoDriver }
func (*cudaLib) device(int) (string, int, int, int, uint64, error) {
	return "", 0, 0, 0, 0, ErrNoDriver
}
func (*cudaLib) blas() bool                        { return false }
func (*cudaLib) close()                            {}
func (*cudaLib) alloc(int) (uint64, error)         { return 0, ErrNoDriver }
func (*cudaLib) free(uint64)                       {}
func (*cudaLib) htod(uint64, []float32) error      { return ErrNoDriver }
func (*cudaLib) dtoh([]float32, uint64) error      { return ErrNoDriver }
func (*cudaLib) sync() error                       { return ErrNoDriver }
func (*cudaLib) hostAlloc(int) ([]float32, error)  { return nil, ErrNoDriver }
func (*cudaLib) hostFree([]float32)                {}
func (*cudaLib) htodAsync(uint64, []float32) error { return ErrNoDriver }
func (*cudaLib) dtohAsync([]float32, uint64) error { return ErrNoDriver }
func (*cudaLib) record(int) error                  { return ErrNoDriver }
func (*cudaLib) wait(int) error                    { return ErrNoDriver }
func (*cudaLib) canCapture() bool                  { return false }
func (*cudaLib) beginCapture() error               { return ErrNoDriver }
func (*cudaLib) endCapture() (uint64, error)       { return 0, ErrNoDriver }
func (*cudaLib) graphLaunch(uint64) error          { return ErrNoDriver }
func (*cudaLib) graphDrop(uint64)                  {}
func (*cudaLib) memInfo() (uint64, uint64, error)  { return 0, 0, ErrNoDriver }
func (*cudaLib) launch(unsafe.Pointer, int, int, int, int, []uint64) error {
	return ErrNoDriver
}
func (*cudaLib) sgemm(bool, bool, int, int, int, uint64, uint64, uint64, float32) error {
	return ErrNoDriver
}
func (*cudaLib) module(string, []string) (map[string]unsafe.Pointer, error) {
	return nil, ErrNoDriver
}
