#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build tkc,
# generate CUDA from the shipped GEMM spec and compile it with nvcc for sm_90a.
# Its own build folder (build-quickstart, Release), so that it and
# scripts/test.sh (build, build-asan) run in either order, again and again,
# without reconfiguring or rebuilding each other's.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build=build-quickstart
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target tkc -j "$(nproc)"

mkdir -p "$build/quickstart"
$build/bin/tkc kernels-spec/gemm.yaml -o $build/quickstart/gemm.cu
echo "tkc: wrote $build/quickstart/gemm.cu and gemm.h from kernels-spec/gemm.yaml"

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ]; then
  echo "tkc: nvcc (CUDA 13) not found; skipping the compile of gemm.cu" >&2
  exit 0
fi
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr \
  -Ikittens/include -Iruntime/include -I$build/quickstart -Xptxas -v \
  -c $build/quickstart/gemm.cu -o $build/quickstart/gemm.o 2> $build/quickstart/ptxas.txt
kernels=$(grep -c "Compiling entry function" $build/quickstart/ptxas.txt)
spills=$(grep -c "[1-9][0-9]* bytes spill" $build/quickstart/ptxas.txt || true)
echo "nvcc: compiled $build/quickstart/gemm.o for sm_90a: $kernels kernels, $spills with spills"
