#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build tkc, and
# run it on the shipped GEMM spec. Until the lowering lands, tkc prints the
# spec's located AST; afterwards this generates and compiles gemm.cu.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target tkc -j "$(nproc)"

build/bin/tkc kernels-spec/gemm.yaml --emit=ast -o build/gemm.ast
echo "tkc: wrote build/gemm.ast from kernels-spec/gemm.yaml:"
cat build/gemm.ast
