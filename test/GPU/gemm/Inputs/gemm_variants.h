// The instantiations of kernels-spec/gemm.yaml and one call that launches any of them,
// shared by the GPU correctness test and the benchmark.
#pragma once

#include "gemm.h"

#include <cuda_bf16.h>

#include <string>

namespace gemm_variants {

enum class Epilogue { None, Bias, Gelu, BiasGelu, Residual };

struct Variant {
  const char *name;
  bool transposeB;
  Epilogue epilogue;
};

inline const Variant kVariants[] = {
    {"gemm_none", false, Epilogue::None},
    {"gemm_bias", false, Epilogue::Bias},
    {"gemm_gelu", false, Epilogue::Gelu},
    {"gemm_bias_gelu", false, Epilogue::BiasGelu},
    {"gemm_residual", false, Epilogue::Residual},
    {"gemm_transpose_b_none", true, Epilogue::None},
    {"gemm_transpose_b_bias", true, Epilogue::Bias},
    {"gemm_transpose_b_gelu", true, Epilogue::Gelu},
    {"gemm_transpose_b_bias_gelu", true, Epilogue::BiasGelu},
    {"gemm_transpose_b_residual", true, Epilogue::Residual},
};

using bf16 = __nv_bfloat16;

struct Device {
  bf16 *A = nullptr, *B = nullptr, *C = nullptr, *bias = nullptr, *R = nullptr;
};

inline tkc::runtime::Status launch(const Variant &v, const Device &d, long long M, long long N,
                                   long long K, cudaStream_t stream = 0) {
  using namespace tkc::kernels;
  const std::string n = v.name;
  if (n == "gemm_none") return gemm_none(d.A, d.B, d.C, M, N, K, stream);
  if (n == "gemm_bias") return gemm_bias(d.A, d.B, d.C, d.bias, M, N, K, stream);
  if (n == "gemm_gelu") return gemm_gelu(d.A, d.B, d.C, M, N, K, stream);
  if (n == "gemm_bias_gelu") return gemm_bias_gelu(d.A, d.B, d.C, d.bias, M, N, K, stream);
  if (n == "gemm_residual") return gemm_residual(d.A, d.B, d.C, d.R, M, N, K, stream);
  if (n == "gemm_transpose_b_none") return gemm_transpose_b_none(d.A, d.B, d.C, M, N, K, stream);
  if (n == "gemm_transpose_b_bias") return gemm_transpose_b_bias(d.A, d.B, d.C, d.bias, M, N, K, stream);
  if (n == "gemm_transpose_b_gelu") return gemm_transpose_b_gelu(d.A, d.B, d.C, M, N, K, stream);
  if (n == "gemm_transpose_b_bias_gelu")
    return gemm_transpose_b_bias_gelu(d.A, d.B, d.C, d.bias, M, N, K, stream);
  return gemm_transpose_b_residual(d.A, d.B, d.C, d.R, M, N, K, stream);
}

} // namespace gemm_variants
