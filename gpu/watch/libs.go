package watch

import (
	"path"
	"strings"
)

// Library kinds: what a mapped file tells about a process.
const (
	LibTorchCUDA  = "libtorch_cuda"    // torch's CUDA kernels: a CUDA build of torch is loaded
	LibTorchCPU   = "libtorch_cpu"     // torch's CPU part, loaded by every build
	LibTorchHIP   = "libtorch_hip"     // a ROCm (AMD) build of torch
	LibCUDART     = "libcudart"        // the CUDA runtime
	LibCuDNN      = "libcudnn"         // cuDNN
	LibCuBLAS     = "libcublas"        // cuBLAS
	LibCUDA       = "libcuda"          // the driver's CUDA library: loaded when CUDA is initialised
	LibNVML       = "libnvidia-ml"     // NVML, which torch.cuda.is_available() may use
	LibNCCL       = "libnccl"          // NCCL: multi-GPU communication
	LibTensorFlow = "tensorflow"       // TensorFlow's framework library
	LibJAX        = "jaxlib"           // JAX's XLA
	LibJAXCUDA    = "jax_cuda"         // JAX's CUDA plugin
	LibORTCUDA    = "onnxruntime_cuda" // ONNX Runtime's CUDA provider
)

// Lib is a library of interest mapped into a process of the tree.
type Lib struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	PID  int    `json:"pid"`
}

// libKind names what a mapped file is, or "" when it does not matter.
func libKind(file string) string {
	base := path.Base(file)
	stem, _, ok := strings.Cut(base, ".so")
	if !ok {
		return ""
	}
	stem = stripWheelHash(stem)
	switch {
	case stem == "libtorch_cuda" || stem == "libtorch_cuda_cu" || stem == "libtorch_cuda_cpp":
		return LibTorchCUDA
	case stem == "libtorch_cpu":
		return LibTorchCPU
	case stem == "libtorch_hip":
		return LibTorchHIP
	case stem == "libcudart":
		return LibCUDART
	case stem == "libcudnn" || strings.HasPrefix(stem, "libcudnn_"):
		return LibCuDNN
	case stem == "libcublas" || stem == "libcublasLt":
		return LibCuBLAS
	case stem == "libcuda":
		return LibCUDA
	case stem == "libnvidia-ml":
		return LibNVML
	case stem == "libnccl":
		return LibNCCL
	case stem == "libtensorflow_framework" || stem == "libtensorflow_cc" || strings.HasPrefix(stem, "_pywrap_tensorflow_internal"):
		return LibTensorFlow
	case stem == "xla_extension" || strings.HasPrefix(stem, "_jax"):
		return LibJAX
	case strings.HasPrefix(stem, "xla_cuda_plugin"):
		return LibJAXCUDA
	case stem == "libonnxruntime_providers_cuda":
		return LibORTCUDA
	}
	return ""
}

// stripWheelHash removes the "-1a2b3c4d" auditwheel adds to a vendored
// library's name ("libcudart-e409450e" → "libcudart").
func stripWheelHash(stem string) string {
	i := strings.LastIndexByte(stem, '-')
	if i < 0 || len(stem)-i-1 != 8 {
		return stem
	}
	for _, c := range stem[i+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return stem
		}
	}
	return stem[:i]
}

// libSet is the libraries of interest of a process tree.
type libSet []Lib

func (s libSet) has(kind string) bool {
	_, ok := s.first(kind)
	return ok
}

func (s libSet) first(kind string) (Lib, bool) {
	for _, l := range s {
		if l.Kind == kind {
			return l, true
		}
	}
	return Lib{}, false
}

// cudaLoaded reports whether any CUDA library a framework brings is loaded.
func (s libSet) cudaLoaded() bool {
	for _, k := range []string{LibTorchCUDA, LibCUDART, LibCuDNN, LibCuBLAS, LibCUDA, LibJAXCUDA, LibORTCUDA} {
		if s.has(k) {
			return true
		}
	}
	return false
}

// frameworkSite finds the site-packages folder a framework was loaded
// from ("/venv/lib/python3.12/site-packages" for
// ".../site-packages/torch/lib/libtorch_cpu.so"), or "".
func frameworkSite(files []string, pkg string) string {
	for _, f := range files {
		for _, site := range []string{"/site-packages/", "/dist-packages/"} {
			i := strings.Index(f, site+pkg+"/")
			if i >= 0 {
				return f[:i+len(site)-1]
			}
		}
	}
	return ""
}
