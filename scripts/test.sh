#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install what is missing, then
#   1. build with g++ (warnings as errors) and run every unit and lit test,
#      the Python package's tests, and build examples/cmake-consumer against
#      an installed tkc (scripts/check-integration.sh);
#   2. build with clang under AddressSanitizer + UndefinedBehaviorSanitizer and
#      run the unit and lit tests again;
#   3. fuzz the spec front end for TKC_FUZZ_SECONDS (default 60), then mutate
#      the shipped specs for TKC_SPEC_FUZZ_SECONDS (default 60) with
#      test/fuzz/spec_mutator.py and compile a few accepted mutants with nvcc
#      (TKC_SPEC_FUZZ=0 skips it).
# GPU tests run only where an sm_90 GPU is visible; elsewhere lit reports
# them UNSUPPORTED.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fuzz_seconds=${TKC_FUZZ_SECONDS:-60}

scripts/install-deps.sh
scripts/check-format.sh

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

echo "== 1/3 build and test (g++)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTKC_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# lit's own counts (passed, unsupported, failed) are kept for the summary.
(cd build && ctest --output-on-failure -V -j "$jobs") > "$logs/gcc.log" 2>&1 ||
  { cat "$logs/gcc.log"; exit 1; }
grep -E "^[0-9]+/[0-9]+ Test|tests passed" "$logs/gcc.log" | tail -n 3
echo "== 1/3 integration: Python package, CMake package and examples/cmake-consumer"
scripts/check-integration.sh build

echo "== 2/3 build and test under ASan+UBSan (clang)"
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTKC_WERROR=ON -DTKC_ENABLE_SANITIZERS=ON -DTKC_ENABLE_FUZZER=ON \
  -DTKC_ENABLE_NVCC_TESTS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
(cd build-asan && ctest --output-on-failure -V -j "$jobs") > "$logs/asan.log" 2>&1 ||
  { cat "$logs/asan.log"; exit 1; }
grep -E "^[0-9]+/[0-9]+ Test|tests passed" "$logs/asan.log" | tail -n 3

echo "== 3/3 fuzz the front end for ${fuzz_seconds}s"
corpus=build-asan/fuzz-corpus
mkdir -p "$corpus"
build-asan/bin/tkc-spec-fuzzer -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
  -dict=test/fuzz/tkc.dict -print_final_stats=1 \
  "$corpus" test/Parse test/AST kernels-spec 2>&1 | tail -n 5
echo "fuzzer: no crash, hang or sanitizer report in ${fuzz_seconds}s"

# The structure-aware spec fuzzer (docs/Testing.md): mutants of the shipped
# specs through build/bin/tkc, same seed every run; failing mutants are saved
# in build/spec-fuzz-failures.
if [[ "${TKC_SPEC_FUZZ:-1}" == 1 ]]; then
  echo "== 3/3 mutate the shipped specs for ${TKC_SPEC_FUZZ_SECONDS:-60}s"
  python3 test/fuzz/spec_mutator.py --tkc build/bin/tkc --seconds "${TKC_SPEC_FUZZ_SECONDS:-60}" \
    --seed "${TKC_SPEC_FUZZ_SEED:-1}" --jobs "$jobs" --nvcc-sample 3 \
    --out build/spec-fuzz-failures --report
fi

echo "== summary"
for build in gcc asan; do
  echo "-- lit ($build): $(grep -E '^[0-9]+: +(Passed|Unsupported|Failed|Expectedly Failed) *:' "$logs/$build.log" |
    sed -E 's/^[0-9]+: +//; s/ *: +/ /' | paste -sd, | sed 's/,/, /g')"
done
grep -E "tests passed, [0-9]+ tests failed out of" "$logs/gcc.log" | tail -n 1
