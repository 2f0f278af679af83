// Package assets holds the files embedded in the binary: the compatibility
// matrix, the deep-check script, the defaults and the icon.
package assets

import "embed"

// CompatYAML is the compatibility matrix the doctor judges against.
//
//go:embed compat.yaml
var CompatYAML []byte

// DeepCheckPy is the Python script the deep check runs in each interpreter.
//
//go:embed deepcheck.py
var DeepCheckPy string

// Icon is the application icon (PNG, 512×512).
//
//go:embed icon.png
var Icon []byte

// MNIST holds the built-in dataset: an MNIST subset as gzipped IDX files
// (see mnist/NOTICE.md for its origin and licence).
//
//go:embed mnist/*.gz mnist/NOTICE.md
var MNIST embed.FS

// DefaultsYAML is the training configuration under --config and flags.
//
//go:embed defaults.yaml
var DefaultsYAML []byte

// KernelsPTX is the executor's CUDA kernels (kernels/kernels.cu compiled
// by `make kernels`), loaded by the driver at run time.
//
//go:embed kernels/kernels.ptx
var KernelsPTX string
