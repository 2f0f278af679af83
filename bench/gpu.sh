#!/usr/bin/env bash
# The checks and figures that need an NVIDIA GPU (run on a machine with the
# driver, Go, and python3 with a CUDA build of PyTorch; make bench-gpu):
#  1. the CUDA backend against the float64 reference: loss, logits and
#     every gradient of MLP, LeNet-5 and the CNN within 1e-4, the
#     optimiser's update within what the gradients explain, batch 8 and
#     64, with cuBLAS and with the own SGEMM kernel (one subtest each);
#     the training step replayed as a CUDA graph against the same step
#     launched kernel by kernel (TestCUDAGraphs);
#  2. no CUDA library among the binary's dependencies;
#  3. training speed against PyTorch CUDA on the same GPU, batch 64 and 256,
#     interleaved (bench/train-speed.sh): ours replayed as a CUDA graph and
#     eager, against PyTorch eager and PyTorch with the whole step in one
#     CUDA graph (torch_reference.py --graph);
#  4. SGEMM throughput and its fraction of the GPU's FP32 peak
#     (PEAK_TFLOPS, default 67 for an H100 SXM; 51 for an H100 PCIe);
#  5. kernel time per step, ours against PyTorch eager, from Nsight Compute
#     (bench/ncu-breakdown.sh; skipped without ncu);
#  6. LeNet-5 on the full MNIST on the GPU: test accuracy (the CPU run gives
#     99.05 %) and NVML's proof of GPU use.
#  7. the detector (det-n) on the GPU: its training speed against the
#     PyTorch twin on CUDA (bench/det-speed.sh, 320 px, batch 64), and a
#     30-epoch run on builtin-detect: its validation mAP50 and mAP50-95
#     (results.json) and NVML's proof of GPU use. (Its kernels against the
#     float64 reference are in stage 1: the det model is one of
#     TestCUDABackend's.)
# On a GPU machine without Go or internet, run `make gpu-kit` where Go is,
# copy the tree with bin/gpu-kit.tar.xz, and run this script there: it
# unpacks and uses the prebuilt gpuwizard, exec.test, MNIST files and
# torch_reference.py. STAGES="1 3" runs some stages only.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f bin/gpu-kit.tar.xz ] && { [ ! -x bin/exec.test ] || [ bin/gpu-kit.tar.xz -nt bin/exec.test ]; }; then
  tar -C bin -xJf bin/gpu-kit.tar.xz
fi
PY=${PY:-python3}
PEAK_TFLOPS=${PEAK_TFLOPS:-67}
STAGES=${STAGES:-"1 2 3 4 5 6 7"}
[ -x bin/gpuwizard ] || make build >/dev/null
exectest() { # the exec package's tests, prebuilt or through go test
  if [ -x bin/exec.test ]; then (cd trainer/exec && ../../bin/exec.test "$@")
  else go test -tags migrated_fynedo -count=1 ./trainer/exec -args "$@"; fi
}
stage() { [[ " $STAGES " == *" $1 "* ]]; }
[ -d bin/mnist ] && export MNIST_DIR=${MNIST_DIR:-$PWD/bin/mnist}
if stage 1; then
  echo "== 1. CUDA backend against the float64 reference; CUDA graphs against eager steps"
  exectest -test.run 'TestCUDABackend$|TestCUDAGraphs|TestPTXMatchesSource' -test.v
fi
if stage 2; then
  echo "== 2. ldd"
  if ldd bin/gpuwizard | grep -iE 'libcuda|cublas|cudart'; then echo "FAIL: the binary links CUDA" >&2; exit 1; fi
  echo "RESULT check=ldd cuda_libraries=0"
fi
if stage 3; then
  echo "== 3. speed against PyTorch CUDA (eager and CUDA graph)"
  for bs in 64 256; do DEVICE=cuda BATCH=$bs PY=$PY ROUNDS=${ROUNDS:-3} bench/train-speed.sh; done
fi
if stage 4; then
  echo "== 4. SGEMM"
  GW_PEAK_TFLOPS=$PEAK_TFLOPS exectest -test.run '^$' -test.bench CUDASgemm -test.benchtime 2s
fi
if stage 5; then
  echo "== 5. kernel time per step (Nsight Compute)"
  if command -v "${NCU:-ncu}" >/dev/null; then
    for m in lenet mlp; do for bs in 64 256; do MODEL=$m BATCH=$bs PY=$PY bench/ncu-breakdown.sh; done; done
  else
    echo "ncu not found: skipped (install the CUDA toolkit's nsight-compute, or set NCU=)"
  fi
fi
if stage 6; then
  echo "== 6. LeNet-5 on MNIST on the GPU"
  DEVICE=cuda bench/mnist-accuracy.sh
fi
if stage 7; then
  echo "== 7. the detector on the GPU: speed against its PyTorch twin, mAP on builtin-detect"
  DEVICE=cuda SIZE=320 BATCH=64 STEPS=50 PY=$PY bench/det-speed.sh
  rm -rf runs/gpu-det
  bin/gpuwizard train --data builtin-detect --model det-n --device cuda --epochs 30 --project runs --name gpu-det --json >/dev/null
  $PY -c 'import json; r = json.load(open("runs/gpu-det/results.json")); d = r["detect"]; print("RESULT det_gpu mAP50=%.4f mAP50-95=%.4f gpu=%s" % (d["map50"], d["map50_95"], json.dumps(r.get("gpu"))))'
fi
