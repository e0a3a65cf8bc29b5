#!/usr/bin/env bash
# The Python loader and the CMake package on a GPU machine (torch, nvcc 13,
# cmake and an sm_90 GPU; no tkc build dependencies needed there).
#
#   scripts/device-python.sh prepare   # here, after building tkc: fills .gen-py/
#   scripts/device-python.sh           # there: runs the tests
#
# `prepare` installs tkc into .gen-py/prefix (bin, headers, CMake package),
# copies every shared library tkc loads into .gen-py/lib and writes
# .gen-py/bin/tkc, which runs tkc with them. The run then:
#   1. runs the pure Python unit tests (python/tests) with the carried tkc;
#   2. runs python/gpu_tests: every GEMM instantiation through tkc.load against
#      an fp32 torch reference, argument errors, streams, and a cache hit;
#   3. builds examples/cmake-consumer against the prefix and runs it.
# Output goes to stdout and, where $OUT is set, to $OUT/device-python.log.
set -euo pipefail
cd "$(dirname "$0")/.."
gen=.gen-py

if [[ "${1:-}" == "prepare" ]]; then
  # `prepare [BUILD [DEST]]`: another build or target folder (scripts/device-ab.sh uses both).
  build=${2:-build}
  gen=${3:-$gen}
  rm -rf "$gen"
  cmake --install "$build" --prefix "$gen/prefix" --strip >/dev/null
  # Every library tkc loads, the C library and its loader included, and a
  # wrapper that runs tkc through that loader: the GPU machine may have an
  # older glibc, and nothing else there sees these libraries.
  mkdir -p "$gen/lib" "$gen/bin"
  ldd "$gen/prefix/bin/tkc" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    while read -r lib; do cp -L "$lib" "$gen/lib/$(basename "$lib")"; done
  loader=$(basename "$(ldd "$gen/prefix/bin/tkc" | awk '$1 ~ /^\// {print $1}')")
  # The wrapper names the binary's hash: tkc.load keys its cache by the file it runs, which is
  # this wrapper, so a rebuilt tkc must change it.
  hash=$(sha256sum "$gen/prefix/bin/tkc" | cut -d' ' -f1)
  cat > "$gen/bin/tkc" <<WRAP
#!/bin/sh
# tkc with the libraries it was built against (scripts/device-python.sh prepare).
# tkc binary sha256: $hash
here=\$(dirname "\$(readlink -f "\$0")")
exec "\$here/../lib/$loader" --library-path "\$here/../lib" "\$here/../prefix/bin/tkc" "\$@"
WRAP
  chmod +x "$gen/bin/tkc"
  "$gen/bin/tkc" --version >/dev/null
  [[ -n "${3:-}" ]] || du -sh "$gen"
  exit 0
fi

[[ -x "$gen/bin/tkc" ]] || { echo "run '$0 prepare' first (on the build machine)" >&2; exit 1; }
log=${OUT:+$OUT/device-python.log}
exec > >(tee ${log:+"$log"}) 2>&1

export TKC_EXECUTABLE="$PWD/$gen/bin/tkc"
export TKC_INCLUDE_DIR="$PWD/$gen/prefix/include"
export TKC_CACHE_DIR
TKC_CACHE_DIR=$(mktemp -d)
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TKC_REQUIRE_TOOLS=1
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || true
"$TKC_EXECUTABLE" --version
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'

failed=()
echo "== 1/3 Python unit tests"
(cd python && python3 -m unittest discover -s tests -t . 2>&1 | tail -n 4) || failed+=("unit tests")

echo "== 2/3 tkc.load on the GPU (cache: $TKC_CACHE_DIR)"
(cd python && python3 -m unittest -v gpu_tests.test_gemm_torch) || failed+=("gpu tests")

echo "== 3/3 examples/cmake-consumer against the installed package"
build=$(mktemp -d)
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if cmake -S examples/cmake-consumer -B "$build" -DCMAKE_PREFIX_PATH="$PWD/$gen/prefix" \
     -DTKC_EXECUTABLE="$TKC_EXECUTABLE" -DCMAKE_CUDA_COMPILER="$nvcc" \
     -DCMAKE_BUILD_TYPE=Release >/dev/null &&
   cmake --build "$build" 2>&1 | tail -n 2; then
  "$build/gemm_bias_demo" || failed+=("cmake consumer run")
else
  failed+=("cmake consumer build")
fi
if ((${#failed[@]})); then
  echo "device-python: FAILED: ${failed[*]}"
  exit 1
fi
echo "device-python: all passed"
