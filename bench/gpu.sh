#!/usr/bin/env bash
# The checks and figures that need an NVIDIA GPU (run on a machine with the
# driver, Go, and python3 with a CUDA build of PyTorch; make bench-gpu):
#  1. the CUDA backend against the float64 reference: loss, logits and
#     every gradient of MLP, LeNet-5 and the CNN within 1e-4, the
#     optimiser's update within what the gradients explain, batch 8 and
#     64, with cuBLAS and with the own SGEMM kernel (one subtest each);
#  2. no CUDA library among the binary's dependencies;
#  3. training speed against PyTorch CUDA on the same GPU, batch 64 and 256,
#     interleaved (bench/train-speed.sh);
#  4. SGEMM throughput and its fraction of the GPU's FP32 peak
#     (PEAK_TFLOPS, default 67 for an H100 SXM; 51 for an H100 PCIe);
#  5. LeNet-5 on the full MNIST on the GPU: test accuracy (the CPU run gives
#     99.05 %) and NVML's proof of GPU use.
# On a GPU machine without Go or internet, run `make gpu-kit` where Go is,
# copy the tree with bin/gpu-kit.tar.xz, and run this script there: it
# unpacks and uses the prebuilt gpuwizard, exec.test and MNIST files.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f bin/gpu-kit.tar.xz ] && [ ! -x bin/exec.test ]; then tar -C bin -xJf bin/gpu-kit.tar.xz; fi
PY=${PY:-python3}
PEAK_TFLOPS=${PEAK_TFLOPS:-67}
[ -x bin/gpuwizard ] || make build >/dev/null
exectest() { # the exec package's tests, prebuilt or through go test
  if [ -x bin/exec.test ]; then (cd trainer/exec && ../../bin/exec.test "$@")
  else go test -tags migrated_fynedo -count=1 ./trainer/exec -args "$@"; fi
}
[ -d bin/mnist ] && export MNIST_DIR=${MNIST_DIR:-$PWD/bin/mnist}
echo "== 1. CUDA backend against the float64 reference"
exectest -test.run 'TestCUDABackend|TestPTXMatchesSource' -test.v
echo "== 2. ldd"
if ldd bin/gpuwizard | grep -iE 'libcuda|cublas|cudart'; then echo "FAIL: the binary links CUDA" >&2; exit 1; fi
echo "RESULT check=ldd cuda_libraries=0"
echo "== 3. speed against PyTorch CUDA"
for bs in 64 256; do DEVICE=cuda BATCH=$bs PY=$PY ROUNDS=${ROUNDS:-3} bench/train-speed.sh; done
echo "== 4. SGEMM"
GW_PEAK_TFLOPS=$PEAK_TFLOPS exectest -test.run '^$' -test.bench CUDASgemm -test.benchtime 2s
echo "== 5. LeNet-5 on MNIST on the GPU"
DEVICE=cuda bench/mnist-accuracy.sh
