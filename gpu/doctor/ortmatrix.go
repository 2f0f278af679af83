package doctor

import (
	"fmt"
	"strconv"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
)

// ONNX Runtime's GPU package is built for one CUDA major version and one
// cuDNN major version, and its CUDA provider does not load beside others
// (it then falls back to the CPU, often without an error). Its
// requirements page (onnxruntime.ai, CUDA Execution Provider,
// "Requirements") gives, for the onnxruntime-gpu wheels on PyPI:
//
//	1.10 – 1.18   CUDA 11 (11.4 – 11.8), cuDNN 8
//	1.19 and on   CUDA 12, cuDNN 9
//
// Builds for the other CUDA exist on ONNX Runtime's own package feed
// (1.17 – 1.18.0 for CUDA 12 with cuDNN 8, 1.18.1 – 1.18.x for CUDA 12
// with cuDNN 9, 1.19 and on for CUDA 11.8 with cuDNN 8), so a CUDA that
// does not fit the PyPI wheel weighs less than a cuDNN that fits neither.
type ortBuild struct {
	cuda, cudnn int  // the PyPI wheel's majors
	feedCUDA    int  // the other CUDA a feed build of this version has (0: none)
	feedCudnn   bool // whether the feed build for feedCUDA has cuDNN cudnn too
}

// ortBuildOf is what onnxruntime-gpu 1.minor was built for; ok false for
// versions before 1.10 (CUDA 10 and 11 mixed) or unknown.
func ortBuildOf(minor, patch int) (b ortBuild, ok bool) {
	switch {
	case minor < 10:
		return ortBuild{}, false
	case minor < 17:
		return ortBuild{cuda: 11, cudnn: 8}, true
	case minor == 17 || minor == 18 && patch == 0:
		return ortBuild{cuda: 11, cudnn: 8, feedCUDA: 12, feedCudnn: true}, true
	case minor == 18:
		return ortBuild{cuda: 11, cudnn: 8, feedCUDA: 12}, true
	}
	return ortBuild{cuda: 12, cudnn: 9, feedCUDA: 11}, true
}

var (
	// ortGPUVersionRE: onnxruntime-gpu and its version, as pip list, pip
	// install, a wheel's file name or prose write it.
	// The C and C++ packages are named onnxruntime-win-x64-gpu-1.17.1 and
	// onnxruntime-linux-x64-cuda12-1.17.1.
	ortGPUVersionRE = mustCue(`\bonnxruntime[-_](?:gpu|(?:win|linux)-(?:x64|aarch64|arm64)-(?:gpu|cuda1[12]))[ \t]*(?:==|>=|~=|=|:|-|\(|version|v)?[ \t]*v?1\.(\d{1,2})(?:\.(\d{1,2}))?\b`, "onnxruntime")
	// cudnnMajorRE: a cuDNN major version the report names: in words
	// (cuDNN 8.9, cudnn v9), a library file (cudnn64_8.dll,
	// cudnn_ops_infer64_8.dll, libcudnn.so.9) or a pip package
	// (nvidia-cudnn-cu12 9.1.0.70).
	cudnnMajorRE = mustCue(`\bcudnn[ \t]*(?:version[ \t]*|v|==|=|:)?[ \t]*([5-9])(?:\.\d+)*\b|\bcudnn\w*64_([5-9])\.dll\b|\blibcudnn\w*\.so\.([5-9])\b|\bnvidia-cudnn-cu1[1-3][ \t=]+([5-9])\.\d`, "cudnn")
	// cudaMajorRE: a CUDA major version the report names as installed:
	// CUDA 12.4, CUDA toolkit 11.8, cublas64_11.dll, libcudart.so.12.
	// nvidia-smi's "CUDA Version: 12.4" is what the driver runs, not
	// what is installed, and is not read here.
	cudaMajorRE = mustCue(`\bcuda[ \t]*(?:toolkit[ \t]*)?v?(1[0-3])(?:\.\d+)?\b|\bcu(?:blas(?:lt)?|dart|fft|rand)64_(1[0-3])\d?\.dll\b|\blibcu(?:blas(?:lt)?|dart|fft|rand)\.so\.(1[0-3])\b`, "cuda", "cublas", "cudart", "cufft", "curand", "libcu")
)

// cueONNXRuntimeMatrix: onnxruntime-gpu of a version named beside a cuDNN
// or CUDA major version it was not built for.
func cueONNXRuntimeMatrix(_ *judge, r *reading) []cue {
	_, m := r.quoteGroups(ortGPUVersionRE)
	if m == nil {
		return nil
	}
	minor, _ := strconv.Atoi(m[0])
	patch, _ := strconv.Atoi(m[1])
	b, ok := ortBuildOf(minor, patch)
	if !ok {
		return nil
	}
	version := "1." + m[0]
	if m[1] != "" {
		version += "." + m[1]
	}
	if n := otherMajor(r, cudnnMajorRE, b.cudnn); n > 0 && (b.feedCUDA == 0 || b.feedCudnn || n != 9) {
		return []cue{{gpu.CauseCudnnProblem, 3, fmt.Sprintf("onnxruntime-gpu %s is built for cuDNN %d (ONNX Runtime's CUDA provider requirements), and the report names cuDNN %d: the CUDA provider does not load, and ONNX Runtime falls back to the CPU", version, b.cudnn, n)}}
	}
	if n := otherMajor(r, cudaMajorRE, b.cuda); n > 0 {
		w := 2.5
		if n == b.feedCUDA {
			w = 1.5 // a feed build for it exists; the PyPI wheel is likelier
		}
		return []cue{{gpu.CauseConflictingInstalls, w, fmt.Sprintf("onnxruntime-gpu %s from PyPI is built for CUDA %d, and the report names CUDA %d: its CUDA provider does not load with the other CUDA's libraries (install the onnxruntime-gpu built for the CUDA there)", version, b.cuda, n)}}
	}
	return nil
}

// otherMajor is the first major version re finds in the report (any of
// its groups) that is not want, or 0.
func otherMajor(r *reading, re *catalog.Pattern, want int) int {
	for _, loc := range re.FindAllIndex(r.low, 16) {
		m := re.Regexp().FindStringSubmatch(r.low[loc[0]:loc[1]])
		for _, g := range m[1:] {
			if n, err := strconv.Atoi(g); err == nil && n != want {
				return n
			}
		}
	}
	return 0
}
