// Correctness of the kernels tkc generates from kernels-spec/gemm.yaml, against a
// double-precision host reference, at square, non-square and ragged shapes, with
// fresh random inputs and the output poisoned before every run; and the launchers'
// answers to what the kernels cannot do: refusals of shapes, of an output overlapping
// an input, of host memory, of K = 0 and of a CUDA error left pending by earlier work,
// success without a launch for an empty output, and managed memory accepted.
//
// Build: nvcc <flags> -I<dir of gemm.h> gemm.cu gemm_check.cu -o gemm_check
// Usage: gemm_check [seed] [quick]   (quick: the first three shapes, small, and one shape of
//                                      a last partial wave for two variants, for the sanitizers)
#include "gemm_variants.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CHECK_CUDA(expr)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (expr);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

using namespace gemm_variants;

double gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

std::vector<bf16> random_bf16(size_t n, std::mt19937 &rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<bf16> v(n);
  for (auto &x : v) x = __float2bfloat16(dist(rng));
  return v;
}

/// Device memory, or managed memory (which launchers accept too).
enum class Memory { Device, Managed };

bf16 *allocate(size_t elements, Memory memory) {
  bf16 *d = nullptr;
  const size_t bytes = std::max<size_t>(elements, 1) * sizeof(bf16);
  if (memory == Memory::Managed)
    CHECK_CUDA(cudaMallocManaged(&d, bytes));
  else
    CHECK_CUDA(cudaMalloc(&d, bytes));
  return d;
}

bf16 *upload(const std::vector<bf16> &h, Memory memory = Memory::Device) {
  bf16 *d = allocate(h.size(), memory);
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(bf16), cudaMemcpyDefault));
  return d;
}

/// Runs one variant at one shape; returns false on a mismatch or an element left unwritten.
bool check(const Variant &v, long long M, long long N, long long K, std::mt19937 &rng,
           Memory memory = Memory::Device) {
  auto hA = random_bf16(M * K, rng), hB = random_bf16(K * N, rng);
  auto hbias = random_bf16(N, rng), hR = random_bf16(M * N, rng);
  Device d;
  d.A = upload(hA, memory);
  d.B = upload(hB, memory); // [K, N], or [N, K] when transposed (same element count)
  d.bias = upload(hbias, memory);
  d.R = upload(hR, memory);
  d.C = allocate(M * N, memory);
  CHECK_CUDA(cudaMemset(d.C, 0xff, M * N * sizeof(bf16))); // poison: bf16 NaN everywhere
  tkc::runtime::Status status = launch(v, d, M, N, K);
  if (!status) {
    std::printf("FAIL %s %lldx%lldx%lld: launcher refused: %s\n", v.name, M, N, K,
                status.message.c_str());
    return false;
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<bf16> hC(M * N);
  CHECK_CUDA(cudaMemcpy(hC.data(), d.C, hC.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  for (bf16 *p : {d.A, d.B, d.C, d.bias, d.R}) CHECK_CUDA(cudaFree(p));

  // The operands in double, B by columns, so that the reference's inner loop reads both in order.
  std::vector<double> a64(M * K), bcols(N * K);
  for (long long i = 0; i < M * K; ++i) a64[i] = __bfloat162float(hA[i]);
  for (long long j = 0; j < N; ++j)
    for (long long k = 0; k < K; ++k)
      bcols[j * K + k] = __bfloat162float(v.transposeB ? hB[j * K + k] : hB[k * N + j]);
  // Rows dealt out to the host's threads, each summing its own error terms.
  const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<double> err2s(threads, 0), ref2s(threads, 0);
  std::vector<long long> unwrittens(threads, 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (long long i = t; i < M; i += threads)
        for (long long j = 0; j < N; ++j) {
          double acc = 0;
          const double *a = &a64[i * K], *b = &bcols[j * K];
          for (long long k = 0; k < K; ++k) acc += a[k] * b[k];
          if (v.epilogue == Epilogue::Bias || v.epilogue == Epilogue::BiasGelu)
            acc += __bfloat162float(hbias[j]);
          if (v.epilogue == Epilogue::Gelu || v.epilogue == Epilogue::BiasGelu) acc = gelu(acc);
          if (v.epilogue == Epilogue::Residual) acc += __bfloat162float(hR[i * N + j]);
          double got = __bfloat162float(hC[i * N + j]);
          if (std::isnan(got)) ++unwrittens[t];
          else err2s[t] += (got - acc) * (got - acc);
          ref2s[t] += acc * acc;
        }
    });
  for (auto &th : pool) th.join();
  double err2 = 0, ref2 = 0;
  long long unwritten = 0;
  for (unsigned t = 0; t < threads; ++t) {
    err2 += err2s[t];
    ref2 += ref2s[t];
    unwritten += unwrittens[t];
  }
  double rel = std::sqrt(err2 / std::max(ref2, 1e-30));
  bool ok = unwritten == 0 && rel <= 1e-2;
  std::printf("%s %-28s M=%-5lld N=%-5lld K=%-5lld rel_err=%.3e unwritten=%lld%s\n",
              ok ? "ok  " : "FAIL", v.name, M, N, K, rel, unwritten,
              memory == Memory::Managed ? " (managed memory)" : "");
  return ok;
}

/// A shape the kernel cannot do must be refused with a message, not launched.
bool expect_refusal(const Variant &v, long long M, long long N, long long K, bool nullA,
                    const char *needle) {
  Device d;
  size_t elems = 4096 * 4096;
  for (bf16 **p : {&d.A, &d.B, &d.C, &d.bias, &d.R}) CHECK_CUDA(cudaMalloc(p, elems * 2));
  bf16 *keepA = d.A;
  if (nullA) d.A = nullptr;
  tkc::runtime::Status status = launch(v, d, M, N, K);
  for (bf16 *p : {keepA, d.B, d.C, d.bias, d.R}) CHECK_CUDA(cudaFree(p));
  bool ok = !status && status.message.find(needle) != std::string::npos;
  std::printf("%s refusal %s M=%lld N=%lld K=%lld: %s\n", ok ? "ok  " : "FAIL", v.name, M, N, K,
              status ? "(launched!)" : status.message.c_str());
  return ok;
}

constexpr size_t kBufferElements = 4096 * 4096;

/// Every buffer of `d` freshly allocated (kBufferElements each), C poisoned.
Device allocate_all() {
  Device d;
  for (bf16 **p : {&d.A, &d.B, &d.C, &d.bias, &d.R}) CHECK_CUDA(cudaMalloc(p, kBufferElements * 2));
  CHECK_CUDA(cudaMemset(d.C, 0xff, kBufferElements * 2));
  return d;
}

void free_all(const Device &d) {
  for (bf16 *p : {d.A, d.B, d.C, d.bias, d.R}) CHECK_CUDA(cudaFree(p));
}

/// Whether every element of the buffer at `C` still holds the poison allocate_all wrote.
bool still_poisoned(const bf16 *C) {
  std::vector<unsigned short> h(kBufferElements);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(h.data(), C, kBufferElements * 2, cudaMemcpyDeviceToHost));
  for (unsigned short x : h)
    if (x != 0xffff) return false;
  return true;
}

/// A launch with the arguments `spoil` makes of fresh buffers must be refused with a message
/// holding `needle`, and C left as it was (nothing launched).
bool expect_refusal_of(const char *what, const Variant &v, long long M, long long N, long long K,
                       const std::function<void(Device &)> &spoil, const char *needle) {
  const Device fresh = allocate_all();
  Device d = fresh;
  spoil(d);
  tkc::runtime::Status status = launch(v, d, M, N, K);
  const bool untouched = still_poisoned(fresh.C);
  free_all(fresh);
  bool ok = !status && status.message.find(needle) != std::string::npos && untouched;
  std::printf("%s refusal %s %s M=%lld N=%lld K=%lld: %s%s\n", ok ? "ok  " : "FAIL", v.name, what,
              M, N, K, status ? "(launched!)" : status.message.c_str(),
              untouched ? "" : " (C written!)");
  return ok;
}

/// An empty output: success, with nothing launched (C, poisoned, stays so). `nullC`: C is
/// passed as null, as it may be when it has no elements.
bool expect_empty(const Variant &v, long long M, long long N, long long K, bool nullC) {
  const Device fresh = allocate_all();
  Device d = fresh;
  if (nullC) d.C = nullptr;
  if (M == 0) d.A = nullptr; // no elements either
  tkc::runtime::Status status = launch(v, d, M, N, K);
  const bool untouched = still_poisoned(fresh.C);
  const cudaError_t pending = cudaPeekAtLastError();
  free_all(fresh);
  bool ok = status && untouched && pending == cudaSuccess;
  std::printf("%s empty %s M=%lld N=%lld K=%lld%s: %s%s\n", ok ? "ok  " : "FAIL", v.name, M, N, K,
              nullC ? " (C null)" : "", status ? "success" : status.message.c_str(),
              untouched ? "" : " (C written!)");
  return ok;
}

/// Fails to launch on purpose (more threads than a block may have; CUDA 13 says
/// cudaErrorInvalidValue): a CUDA error recorded but not sticky, as an earlier library's bad
/// launch would leave.
__global__ void never_runs() {}

/// An error another launch left pending is reported as such, not as this launch's, and nothing
/// is launched; the launcher clears it, so the next launch runs.
bool expect_pending_error_reported(const Variant &v, std::mt19937 &rng) {
  const Device d = allocate_all();
  never_runs<<<1, 4096>>>();
  const cudaError_t planted = cudaPeekAtLastError();
  tkc::runtime::Status status = launch(v, d, 256, 256, 64);
  const cudaError_t after = cudaPeekAtLastError();
  const bool untouched = still_poisoned(d.C);
  free_all(d);
  const std::string pending = std::string("an earlier CUDA error is pending: ") +
                              cudaGetErrorName(planted) + " (";
  const bool reported = !status && status.message.find(pending) != std::string::npos &&
                        status.message.find("it was not caused by this launch") != std::string::npos;
  bool ok = planted != cudaSuccess && reported && untouched && after == cudaSuccess;
  std::printf("%s pending error %s: planted %s; %s%s; afterwards %s\n", ok ? "ok  " : "FAIL",
              v.name, cudaGetErrorName(planted),
              status ? "(launched!)" : status.message.c_str(), untouched ? "" : " (C written!)",
              cudaGetErrorName(after));
  // Cleared: the same launcher runs and computes right.
  return ok && check(v, 256, 256, 64, rng);
}

} // namespace

int main(int argc, char **argv) {
  unsigned seed = argc > 1 && std::strcmp(argv[1], "-") != 0 ? std::strtoul(argv[1], nullptr, 10)
                                                             : unsigned(std::time(nullptr));
  const bool quick = argc > 2 && std::strcmp(argv[2], "quick") == 0;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  struct Shape { long long M, N, K; };
  // Square, non-square, and ragged in every dimension: M, N and K need not be multiples
  // of the 128x256x64 tiles (N and K only of 8, for 16-byte TMA rows; the launchers check).
  // Tasks of one, two, three and more stages (those of three or more end split in column
  // halves), and grids of more tasks (153, 136) than an H100 has multiprocessors, so that
  // blocks run several tasks, the second walking K backward (loop_order: alternate) from its
  // ragged last tile, over 4 stages and over 7 (more than the ring holds). The first three
  // (quick) cover a task of one stage, one of two and a split one.
  const Shape shapes[] = {{1, 8, 8},        {129, 264, 72},  {384, 256, 512},
                          {128, 256, 64},   {256, 512, 128}, {200, 1000, 1000},
                          {1000, 520, 136}, {513, 776, 200}, {2136, 2056, 200},
                          {2136, 1800, 392}};
  const size_t num_shapes = quick ? 3 : std::size(shapes);
  // Grids of more than one wave with a last partial one: on an H100's 132 blocks, 198 tiles
  // of 35 steps (66 in the last wave) and 152 of 30 (20 in the last wave), ragged in M, N and
  // K, so that blocks run a second task of another length while others have none left.
  const Shape last_wave_shapes[] = {{2400, 2000, 1896}, {2250, 2760, 2200}};
  int failures = 0, runs = 0;
  for (const Variant &v : kVariants)
    for (size_t i = 0; i < num_shapes; ++i, ++runs)
      failures += !check(v, shapes[i].M, shapes[i].N, shapes[i].K, rng);
  for (const Variant &v : kVariants) {
    const bool in_quick = &v == &kVariants[0] || &v == &kVariants[7];
    for (size_t i = 0; i < (quick ? (in_quick ? 1 : 0) : std::size(last_wave_shapes)); ++i, ++runs)
      failures +=
          !check(v, last_wave_shapes[i].M, last_wave_shapes[i].N, last_wave_shapes[i].K, rng);
  }
  failures += !expect_refusal(kVariants[0], 256, 1001, 64, false, "rows of B must be a multiple of 16 bytes");
  failures += !expect_refusal(kVariants[0], 256, 256, 100, false, "rows of A must be a multiple of 16 bytes");
  failures += !expect_refusal(kVariants[5], 256, 256, 100, false, "rows of A must be a multiple of 16 bytes");
  // M = 0 is an empty problem now (below); a negative size is refused.
  failures += !expect_refusal(kVariants[0], -1, 256, 64, false, "M must be between 0 and");
  failures += !expect_refusal(kVariants[0], 256, 256, 64, true, "A must not be null");
  runs += 5;
  // An output that overlaps an input, wholly or by its last 8 elements; bias inside C.
  failures += !expect_refusal_of("C at A", kVariants[0], 256, 256, 64,
                                 [](Device &d) { d.C = d.A; }, "output C overlaps input A");
  failures += !expect_refusal_of("C in A's tail", kVariants[5], 256, 256, 64,
                                 [](Device &d) { d.C = d.A + 256 * 64 - 8; },
                                 "output C overlaps input A");
  failures += !expect_refusal_of("bias in C", kVariants[1], 256, 256, 64,
                                 [](Device &d) { d.bias = d.C + 256 * 128; },
                                 "output C overlaps input bias");
  // Host memory, pageable and page-locked.
  std::vector<bf16> host(256 * 64 + 8);
  bf16 *host_A =
      reinterpret_cast<bf16 *>((reinterpret_cast<std::uintptr_t>(host.data()) + 15) & ~std::uintptr_t(15));
  failures += !expect_refusal_of("host A", kVariants[0], 256, 256, 64,
                                 [&](Device &d) { d.A = host_A; },
                                 "A is host memory; pass a device pointer");
  bf16 *pinned = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, 256 * 64 * 2));
  failures += !expect_refusal_of("pinned B", kVariants[0], 256, 256, 64,
                                 [&](Device &d) { d.B = pinned; },
                                 "B is page-locked host memory; pass a device pointer");
  CHECK_CUDA(cudaFreeHost(pinned));
  // K = 0 under a non-empty C: C = A·B would be zeros, which the kernel (writing C only from
  // the stages of its loop over K) cannot produce: refused.
  failures += !expect_refusal_of("K = 0", kVariants[1], 256, 256, 0, [](Device &) {},
                                 "K is 0: the loop over K has no stage");
  // Empty outputs: success without a launch, C untouched; null where it has no elements.
  failures += !expect_empty(kVariants[0], 0, 256, 64, false);
  failures += !expect_empty(kVariants[9], 0, 256, 64, true);
  failures += !expect_empty(kVariants[1], 256, 0, 64, true);
  runs += 9;
  // Managed memory is accepted (and computed right).
  failures += !check(kVariants[3], 129, 264, 72, rng, Memory::Managed);
  ++runs;
  // Not under the sanitizers (quick): the planted launch error is an API error they report.
  if (!quick) {
    failures += !expect_pending_error_reported(kVariants[0], rng);
    ++runs;
  }
  std::printf("%d passed, %d failed\n", runs - failures, failures);
  return failures ? 1 : 0;
}
