package watch

import (
	"regexp"
	"strings"
)

// Library kinds: what a mapped file (a loaded DLL on Windows) tells about
// a process.
const (
	LibTorchCUDA  = "libtorch_cuda"    // torch's CUDA kernels: a CUDA build of torch is loaded
	LibTorchCPU   = "libtorch_cpu"     // torch's CPU part, loaded by every build
	LibTorchHIP   = "libtorch_hip"     // a ROCm (AMD) build of torch
	LibCUDART     = "libcudart"        // the CUDA runtime
	LibCuDNN      = "libcudnn"         // cuDNN
	LibCuBLAS     = "libcublas"        // cuBLAS
	LibCUDA       = "libcuda"          // the driver's CUDA library (nvcuda.dll): loaded when CUDA is initialised
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

// winVersioned is a Windows CUDA DLL's version suffix: cudart64_12,
// cublasLt64_12, cudnn_ops64_9.
var winVersioned = regexp.MustCompile(`^(.+?)(?:64|32)_\d+$`)

// libStem is a library's name without folder, extension and version:
// "libcudart" for .../libcudart.so.12 and for
// libcudart-e409450e.so.11.0 (auditwheel's copy), "cudart" for
// C:\...\cudart64_12.dll; ok is false for a file that is no library.
func libStem(file string) (stem string, windows bool, ok bool) {
	base := file
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if s, _, found := strings.Cut(base, ".so"); found {
		return stripWheelHash(s), false, true
	}
	low := strings.ToLower(base)
	for _, ext := range []string{".dll", ".pyd"} {
		if s, found := strings.CutSuffix(low, ext); found {
			if m := winVersioned.FindStringSubmatch(s); m != nil {
				s = m[1]
			}
			return s, true, true
		}
	}
	return "", false, false
}

// libKind names what a mapped file is, or "" when it does not matter.
func libKind(file string) string {
	stem, win, ok := libStem(file)
	if !ok {
		return ""
	}
	if win {
		return winLibKind(stem)
	}
	switch {
	case stem == "libtorch_cuda" || stem == "libtorch_cuda_cu" || stem == "libtorch_cuda_cpp" || stem == "libc10_cuda":
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

// winLibKind names a Windows DLL (its lower-case stem): torch_cuda.dll,
// c10_cuda.dll, cudart64_12.dll, cublas64_12.dll, cudnn64_9.dll, the
// driver's nvcuda.dll, nvml.dll.
func winLibKind(stem string) string {
	switch {
	case stem == "torch_cuda" || stem == "torch_cuda_cu" || stem == "torch_cuda_cpp" || stem == "c10_cuda":
		return LibTorchCUDA
	case stem == "torch_cpu":
		return LibTorchCPU
	case stem == "cudart":
		return LibCUDART
	case stem == "cudnn" || strings.HasPrefix(stem, "cudnn_"):
		return LibCuDNN
	case stem == "cublas" || stem == "cublaslt":
		return LibCuBLAS
	case stem == "nvcuda":
		return LibCUDA
	case stem == "nvml":
		return LibNVML
	case strings.HasPrefix(stem, "_pywrap_tensorflow_internal") || stem == "tensorflow_framework":
		return LibTensorFlow
	case stem == "onnxruntime_providers_cuda":
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
// ".../site-packages/torch/lib/libtorch_cpu.so"; on Windows
// "C:\...\Lib\site-packages" for "...\site-packages\torch\lib\torch_cpu.dll"),
// or "".
func frameworkSite(files []string, pkg string) string {
	for _, f := range files {
		low := strings.ToLower(f)
		for _, sep := range []string{"/", `\`} {
			for _, site := range []string{"site-packages", "dist-packages"} {
				if i := strings.Index(low, sep+site+sep+pkg+sep); i >= 0 {
					return f[:i+len(sep)+len(site)]
				}
			}
		}
	}
	return ""
}
