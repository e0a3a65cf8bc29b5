/**
 * @file
 * @brief Shared harness for the GEMM ladder: C = A·B, A (M x K) and B (K x N) row-major
 * bf16, fp32 accumulation, C row-major bf16.
 *
 * Each level's binary does, in one process: random normal inputs (seeded, never zeros),
 * an independent fp32 SIMT reference GEMM, the level's kernel and cuBLAS (cublasGemmEx,
 * bf16 in/out, fp32 compute) on the same buffers, correctness first (relative Frobenius
 * error vs the reference, outputs poisoned before the checked run), then timing: warm-up,
 * then timing: after warm-up, cuBLAS and the kernel alternate run by run (each run bracketed
 * by its own CUDA events), so both see the same clocks; each side reports its median, and
 * quartiles of both and of the per-pair ratio are printed so the spread is visible. It prints a table line and
 * appends one JSON record per measured kernel to the file named by --json.
 */
#pragma once

#include <kittens/kittens.cuh>

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#define CK(call) KITTENS_CUDA_CHECK(call)
#define CKB(call)                                                                                 \
  do {                                                                                            \
    cublasStatus_t s_ = (call);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d in %s\n", __FILE__, __LINE__, int(s_), #call); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace ladder {

using kittens::bf16;

struct options {
  int M = 4096, N = 4096, K = 4096;
  int warmup = 20, iters = 300;
  std::string json;
  unsigned long long seed = 0;
};

inline options parse(int argc, char **argv) {
  options o;
  o.seed = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { if (i + 1 >= argc) { std::fprintf(stderr, "missing value after %s\n", a.c_str()); std::exit(2); } return std::string(argv[++i]); };
    if (a == "--m") o.M = std::stoi(next());
    else if (a == "--n") o.N = std::stoi(next());
    else if (a == "--k") o.K = std::stoi(next());
    else if (a == "--size") o.M = o.N = o.K = std::stoi(next());
    else if (a == "--iters") o.iters = std::stoi(next());
    else if (a == "--warmup") o.warmup = std::stoi(next());
    else if (a == "--json") o.json = next();
    else if (a == "--seed") o.seed = std::stoull(next());
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); std::exit(2); }
  }
  return o;
}

/// Refuse shapes a level does not handle (no silent wrong answers).
inline bool require_multiple(const char *level, const options &o, int bm, int bn, int bk) {
  if (o.M % bm || o.N % bn || o.K % bk) {
    std::fprintf(stderr, "%s: refusing %dx%dx%d: M, N, K must be multiples of %d, %d, %d\n", level, o.M, o.N, o.K, bm, bn, bk);
    return false;
  }
  return true;
}

__device__ inline uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
/// Standard normal values (Box-Muller on a counter hash).
__global__ void fill_normal(bf16 *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t h = mix(seed ^ mix(i));
    float u1 = ((h >> 40) + 1) * (1.0f / 16777217.0f), u2 = ((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
    p[i] = __float2bfloat16_rn(sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));
  }
}
/// Independent fp32 reference: 64x64 block tiles in shared memory, 4x4 outputs per thread.
__global__ void reference_gemm(const bf16 *A, const bf16 *B, float *C, int M, int N, int K) {
  __shared__ float As[16][64 + 1], Bs[16][64 + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = threadIdx.x; i < 16 * 64; i += 256) {
      int kk = i / 64, mm = i % 64;
      As[kk][mm] = __bfloat162float(A[size_t(m0 + mm) * K + k0 + kk]);
      Bs[kk][mm] = __bfloat162float(B[size_t(k0 + kk) * N + n0 + mm]);
    }
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += As[kk][ty * 4 + i] * Bs[kk][tx * 4 + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) C[size_t(m0 + ty * 4 + i) * N + n0 + tx * 4 + j] = acc[i][j];
}

struct problem {
  options o;
  bf16 *A = nullptr, *B = nullptr, *C = nullptr;
  float *ref = nullptr;
  std::vector<float> href;
  cublasHandle_t handle{};
  std::string gpu;

  explicit problem(const options &opt) : o(opt) {
    const size_t a = size_t(o.M) * o.K, b = size_t(o.K) * o.N, c = size_t(o.M) * o.N;
    CK(cudaMalloc(&A, a * 2));
    CK(cudaMalloc(&B, b * 2));
    CK(cudaMalloc(&C, c * 2));
    CK(cudaMalloc(&ref, c * 4));
    fill_normal<<<1024, 256>>>(A, a, o.seed);
    fill_normal<<<1024, 256>>>(B, b, o.seed * 31 + 7);
    CK(cudaGetLastError());
    if (o.M % 64 || o.N % 64 || o.K % 16) {
      std::fprintf(stderr, "reference GEMM needs M, N multiples of 64 and K of 16\n");
      std::exit(2);
    }
    reference_gemm<<<dim3(o.N / 64, o.M / 64), 256>>>(A, B, ref, o.M, o.N, o.K);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    href.resize(c);
    CK(cudaMemcpy(href.data(), ref, c * 4, cudaMemcpyDeviceToHost));
    CKB(cublasCreate(&handle));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    gpu = p.name;
    std::printf("GPU %s, %d SMs; problem %dx%dx%d bf16, seed %llu\n", p.name, p.multiProcessorCount, o.M, o.N, o.K, o.seed);
  }
  ~problem() {
    cublasDestroy(handle);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(ref);
  }

  void cublas() {
    const float alpha = 1.f, beta = 0.f;
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    CKB(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, o.N, o.M, o.K, &alpha, B, CUDA_R_16BF, o.N, A, CUDA_R_16BF, o.K, &beta, C,
                     CUDA_R_16BF, o.N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  /// Poison C, run once, compare with the reference.
  double check(const std::function<void()> &run) {
    const size_t c = size_t(o.M) * o.N;
    CK(cudaMemset(C, 0xFF, c * 2));
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<bf16> h(c);
    CK(cudaMemcpy(h.data(), C, c * 2, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < c; ++i) {
      const double g = __bfloat162float(h[i]), w = href[i];
      if (std::isnan(g)) return NAN;
      num += (g - w) * (g - w);
      den += w * w;
    }
    return std::sqrt(num / den);
  }

  /// `warmup` runs of each, then `iters` pairs (a, b) each bracketed by its own CUDA events.
  void time_pairs(const std::function<void()> &a, const std::function<void()> &b, std::vector<double> &ta,
                  std::vector<double> &tb) {
    for (int i = 0; i < o.warmup; ++i) { a(); b(); }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> ev(4 * o.iters);
    for (auto &e : ev) CK(cudaEventCreate(&e));
    for (int i = 0; i < o.iters; ++i) {
      CK(cudaEventRecord(ev[4 * i]));
      a();
      CK(cudaEventRecord(ev[4 * i + 1]));
      CK(cudaEventRecord(ev[4 * i + 2]));
      b();
      CK(cudaEventRecord(ev[4 * i + 3]));
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    ta.resize(o.iters);
    tb.resize(o.iters);
    for (int i = 0; i < o.iters; ++i) {
      float x, y;
      CK(cudaEventElapsedTime(&x, ev[4 * i], ev[4 * i + 1]));
      CK(cudaEventElapsedTime(&y, ev[4 * i + 2], ev[4 * i + 3]));
      ta[i] = x;
      tb[i] = y;
    }
    for (auto &e : ev) cudaEventDestroy(e);
  }

  double tflops(double ms) const { return 2.0 * o.M * o.N * o.K / (ms * 1e-3) / 1e12; }
};

/// Measure `kernel` and cuBLAS in this process; print and record. Returns 0 if correct.
inline int measure(problem &p, const char *name, const char *config, const std::function<void()> &run) {
  const double err_k = p.check(run);
  const double err_b = p.check([&] { p.cublas(); });
  const bool ok = std::isfinite(err_k) && err_k <= 1e-2;
  if (!ok) {
    std::printf("%s: WRONG RESULT: rel err %.3g (bound 1e-2); not timing it\n", name, err_k);
    return 1;
  }
  // Paired, interleaved timing: cuBLAS and the kernel alternate run by run, so both see the
  // same clock and thermal state (sustained GEMMs make this H100 lower its clocks).
  std::vector<double> rb, rk;
  p.time_pairs([&] { p.cublas(); }, run, rb, rk);
  auto pct = [](std::vector<double> v, double q) { std::sort(v.begin(), v.end()); return v[size_t(q * (v.size() - 1))]; };
  std::vector<double> ratio(rk.size());
  for (size_t i = 0; i < rk.size(); ++i) ratio[i] = rb[i] / rk[i];
  const double tb = pct(rb, 0.5), tk = pct(rk, 0.5);
  std::printf("  %s: %zu pairs; kernel ms p25/p50/p75 %.4f/%.4f/%.4f, cuBLAS %.4f/%.4f/%.4f, per-pair ratio p25/p50/p75 %.3f/%.3f/%.3f\n",
              name, rk.size(), pct(rk, .25), tk, pct(rk, .75), pct(rb, .25), tb, pct(rb, .75), pct(ratio, .25), pct(ratio, .5),
              pct(ratio, .75));
  const double fk = p.tflops(tk), fb = p.tflops(tb);
  std::printf("%-16s %6.1f TFLOP/s  cuBLAS %6.1f  ratio %.3f  rel_err %.2e (cuBLAS %.2e)  %s\n", name, fk, fb, fk / fb, err_k, err_b,
              config);
  if (!p.o.json.empty()) {
    FILE *f = std::fopen(p.o.json.c_str(), "a");
    if (!f) { std::perror(p.o.json.c_str()); return 1; }
    const char *commit = std::getenv("KITTENS_COMMIT");
    const char *note = std::getenv("KITTENS_COMMIT_NOTE");
    char date[32];
    std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&t));
    std::fprintf(f,
                 "{\"kernel\": \"%s\", \"config\": \"%s; %dx%dx%d bf16 in, fp32 acc, bf16 out; median of %d event-timed runs interleaved run by run with the baseline, after %d warm-up runs of each\", \"gpu\": \"%s\", \"commit\": \"%s\", \"commit_note\": \"%s\", \"date\": \"%s\", \"tflops\": %.1f, "
                 "\"baseline\": \"cuBLAS cublasGemmEx bf16/fp32-compute, same process\", \"baseline_tflops\": %.1f, \"ratio\": %.3f, "
                 "\"rel_err\": %.3e, \"baseline_rel_err\": %.3e}\n",
                 name, config, p.o.M, p.o.N, p.o.K, p.o.iters, p.o.warmup, p.gpu.c_str(), commit ? commit : "uncommitted",
                 note ? note : "", date, fk, fb, fk / fb, err_k, err_b);
    std::fclose(f);
  }
  return 0;
}

} // namespace ladder
