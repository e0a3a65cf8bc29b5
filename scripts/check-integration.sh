#!/usr/bin/env bash
# The two ways users build generated kernels, checked on a machine without a
# GPU (docs/Integration.md):
#   1. the Python package's unit tests (python/tests) with the tkc of BUILD_DIR;
#      no torch needed; with nvcc they also compile and load a real library;
#   2. `cmake --install` into a temporary prefix, then examples/cmake-consumer
#      configured with find_package(tkc) and built (compile only), and rebuilt
#      only when tkc changes.
# Usage: scripts/check-integration.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc=$(command -v nvcc || { [[ -x /usr/local/cuda/bin/nvcc ]] && echo /usr/local/cuda/bin/nvcc; } || true)

echo "-- python package (python/tests)"
export TKC_EXECUTABLE="$PWD/$build_dir/bin/tkc" TKC_CACHE_DIR="$tmp/cache"
# With nvcc here, a test that needs it must run, not skip.
if [[ -n "$nvcc" ]]; then export TKC_REQUIRE_TOOLS=1 TKC_NVCC="$nvcc"; fi
if ! out=$(cd python && python3 -m unittest discover -s tests -t . 2>&1); then
  echo "$out"
  exit 1
fi
echo "$out" | tail -n 3

echo "-- CMake package: install, then examples/cmake-consumer"
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
for f in bin/tkc include/kittens/kittens.cuh include/tkc/runtime/Check.h \
         lib/cmake/tkc/tkcConfig.cmake lib/cmake/tkc/tkcConfigVersion.cmake; do
  [[ -e "$tmp/prefix/$f" ]] || { echo "install is missing $f" >&2; exit 1; }
done
if [[ -z "$nvcc" ]]; then
  echo "nvcc not found: examples/cmake-consumer not built"
  exit 0
fi
cmake -S examples/cmake-consumer -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CUDA_COMPILER="$nvcc" >/dev/null
cmake --build "$tmp/consumer" | tail -n 1
# Up to date now; a changed tkc regenerates the kernel.
[[ "$(ninja -C "$tmp/consumer" -n)" == *"no work to do"* ]] ||
  { echo "the consumer build is not up to date after building" >&2; exit 1; }
touch "$tmp/prefix/bin/tkc"
[[ "$(ninja -C "$tmp/consumer" -n)" == *"tkc: generating gemm.cu"* ]] ||
  { echo "a changed tkc does not regenerate the kernel" >&2; exit 1; }
echo "examples/cmake-consumer: configured, built, regenerated when tkc changes"
