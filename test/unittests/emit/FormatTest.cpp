//===- FormatTest.cpp -----------------------------------------------------===//
#include "tkc/Emit/Format.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string formatOrFail(llvm::StringRef code) {
  llvm::Expected<std::string> formatted = tkc::formatCuda(code, "test.cu");
  if (!formatted) {
    ADD_FAILURE() << llvm::toString(formatted.takeError());
    return "";
  }
  return *formatted;
}

// Unsorted includes, `T* p`, run-together tokens, three empty lines, a
// missing namespace comment, a kernel launch, and a line over 100 columns.
const char *const kMessy = R"(#include "kittens.cuh"
#include <cstdio>
#include "a.h"
namespace gen{
template<int M,int N> struct tile{float*data;int &ref(int i){return data[i];}};
__global__ void __launch_bounds__(384,1) gemm_kernel(const float* __restrict__ a,float*c,int n){
    int i=blockIdx.x*blockDim.x+threadIdx.x;



if(i<n){c[i]=a[i]*2.0f;}}
void launch(const float*a,float*c,int n,cudaStream_t s){gemm_kernel<<<(n+255)/256,256,0,s>>>(a,c,n);}
}
)";

const char *const kFormatted = R"(#include "kittens.cuh"
#include <cstdio>
#include "a.h"
namespace gen {
template <int M, int N> struct tile {
  float *data;
  int &ref(int i) { return data[i]; }
};
__global__ void __launch_bounds__(384, 1)
    gemm_kernel(const float *__restrict__ a, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n) {
    c[i] = a[i] * 2.0f;
  }
}
void launch(const float *a, float *c, int n, cudaStream_t s) {
  gemm_kernel<<<(n + 255) / 256, 256, 0, s>>>(a, c, n);
}
} // namespace gen
)";

TEST(Format, MessySnippetToTheBuiltInStyle) { EXPECT_EQ(formatOrFail(kMessy), kFormatted); }

TEST(Format, Idempotent) {
  std::string once = formatOrFail(kMessy);
  EXPECT_EQ(formatOrFail(once), once);
  EXPECT_EQ(formatOrFail(kFormatted), kFormatted);
}

TEST(Format, ColumnLimitIs100) {
  // 101 columns: wrapped after the comma.
  std::string call = "f(" + std::string(46, 'a') + ", " + std::string(49, 'b') + ");\n";
  ASSERT_EQ(call.size(), 101u + 1u);
  EXPECT_EQ(formatOrFail(call),
            "f(" + std::string(46, 'a') + ",\n  " + std::string(49, 'b') + ");\n");
  // 100 columns: kept.
  std::string fits = "f(" + std::string(46, 'a') + ", " + std::string(48, 'b') + ");\n";
  ASSERT_EQ(fits.size(), 100u + 1u);
  EXPECT_EQ(formatOrFail(fits), fits);
}

TEST(Format, MalformedCodeIsAnError) {
  llvm::Expected<std::string> formatted = tkc::formatCuda("void f() {\nint a = (1;\n}\n", "k.cu");
  ASSERT_FALSE(static_cast<bool>(formatted));
  EXPECT_EQ(llvm::toString(formatted.takeError()),
            "cannot format 'k.cu': malformed code at line 2");
}

} // namespace
