// A C entry point to the generated GEMM launchers, for the Python benchmark (ctypes).
#include "gemm_variants.h"

#include <cstdio>
#include <cstring>

extern "C" int tkc_gemm(const char *variant, void *A, void *B, void *C, void *bias, void *R,
                        long long M, long long N, long long K, void *stream, char *error,
                        int error_bytes) {
  using namespace gemm_variants;
  for (const Variant &v : kVariants) {
    if (std::strcmp(v.name, variant) != 0) continue;
    Device d;
    d.A = static_cast<bf16 *>(A);
    d.B = static_cast<bf16 *>(B);
    d.C = static_cast<bf16 *>(C);
    d.bias = static_cast<bf16 *>(bias);
    d.R = static_cast<bf16 *>(R);
    tkc::runtime::Status status = launch(v, d, M, N, K, static_cast<cudaStream_t>(stream));
    if (status) return 0;
    std::snprintf(error, error_bytes, "%s", status.message.c_str());
    return 1;
  }
  std::snprintf(error, error_bytes, "unknown variant '%s'", variant);
  return 1;
}
