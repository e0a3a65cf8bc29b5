// Calls the generated launcher tkc::kernels::gemm_bias: C = A·B + bias for
// bf16 matrices, then checks a few entries against the host. Built by
// CMakeLists.txt through tkc_add_kernel(); needs an sm_90a GPU to run.
#include "gemm.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

bool check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

} // namespace

int main() {
  const long long M = 256, N = 512, K = 128;
  std::vector<__nv_bfloat16> a(M * K), b(K * N), bias(N), c(M * N);
  for (long long i = 0; i < M * K; ++i)
    a[i] = __float2bfloat16(static_cast<float>((i * 7) % 13) / 13.0f - 0.5f);
  for (long long i = 0; i < K * N; ++i)
    b[i] = __float2bfloat16(static_cast<float>((i * 5) % 11) / 11.0f - 0.5f);
  for (long long i = 0; i < N; ++i)
    bias[i] = __float2bfloat16(static_cast<float>(i % 3) - 1.0f);

  __nv_bfloat16 *dA, *dB, *dC, *dBias;
  if (!check(cudaMalloc(&dA, a.size() * 2), "cudaMalloc A") ||
      !check(cudaMalloc(&dB, b.size() * 2), "cudaMalloc B") ||
      !check(cudaMalloc(&dC, c.size() * 2), "cudaMalloc C") ||
      !check(cudaMalloc(&dBias, bias.size() * 2), "cudaMalloc bias"))
    return 1;
  cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dBias, bias.data(), bias.size() * 2, cudaMemcpyHostToDevice);

  // The launcher checks sizes, alignment and pitches and says what is wrong
  // instead of launching.
  tkc::runtime::Status status = tkc::kernels::gemm_bias(dA, dB, dC, dBias, M, N, K);
  if (!status.ok) {
    std::fprintf(stderr, "launch refused: %s\n", status.message.c_str());
    return 1;
  }
  if (!check(cudaDeviceSynchronize(), "gemm_bias"))
    return 1;
  cudaMemcpy(c.data(), dC, c.size() * 2, cudaMemcpyDeviceToHost);

  int wrong = 0;
  for (long long i : {0LL, 1LL, 77LL, 255LL}) {
    for (long long j : {0LL, 1LL, 300LL, 511LL}) {
      float ref = __bfloat162float(bias[j]);
      for (long long k = 0; k < K; ++k)
        ref += __bfloat162float(a[i * K + k]) * __bfloat162float(b[k * N + j]);
      float got = __bfloat162float(c[i * N + j]);
      if (!(std::fabs(got - ref) <= 0.02f * std::fabs(ref) + 0.05f)) {
        std::fprintf(stderr, "C[%lld, %lld] = %f, expected %f\n", i, j, got, ref);
        ++wrong;
      }
    }
  }
  // A shape the kernel cannot do is refused with a message, not launched.
  tkc::runtime::Status refused = tkc::kernels::gemm_bias(dA, dB, dC, dBias, M, N, K + 1);
  std::printf("K=%lld refused: %s\n", K + 1, refused.ok ? "no" : refused.message.c_str());
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dBias);
  std::printf("gemm_bias: %s\n", wrong == 0 && !refused.ok ? "ok" : "FAILED");
  return wrong == 0 && !refused.ok ? 0 : 1;
}
