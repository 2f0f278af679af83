//go:build !cgo

// Package cudaemu compiles the CUDA kernels as C, so it needs cgo: built
// without it (CGO_ENABLED=0) the package is empty, and the exec tests that
// drive the emulator need a cgo build (make test-windows builds with
// mingw's gcc).
package cudaemu
