#!/usr/bin/env bash
# Fails when a C++ file of compiler/, dsl/, runtime/ or the host tests differs
# from what clang-format 14 makes of it (.clang-format at the root).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || echo /usr/lib/llvm-14/bin/clang-format)
mapfile -t files < <(git ls-files \
  'compiler/*.cpp' 'compiler/*.h' 'dsl/*.cpp' 'dsl/*.h' 'runtime/*.cpp' 'runtime/*.h' \
  'test/unittests/dsl/*.cpp' 'test/unittests/compiler/*.cpp' 'test/unittests/emit/*.cpp' \
  'test/unittests/runtime/*.cpp' 'test/fuzz/*.cpp')
"$clang_format" --dry-run -Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
