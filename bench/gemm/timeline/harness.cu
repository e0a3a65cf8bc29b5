// Timeline of the generated gemm_none launcher built against the patched LCF template
// (bench/attention/timeline/patch_lcf.py): times the launch (median of 50, operands warm in L2 as
// in the benchmark), then runs it once more with the trace zeroed and writes the trace to the
// file named last. Usage: harness M N K trace.bin
#include KERNEL_CU
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
__global__ void fill(__nv_bfloat16 *p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = __float2bfloat16(((x & 0xffff) / 65536.0f - 0.5f) * 3.0f);
  }
}
int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s M N K trace.bin\n", argv[0]);
    return 2;
  }
  const long long M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  __nv_bfloat16 *A, *B, *C;
  cudaMalloc(&A, M * K * 2);
  cudaMalloc(&B, K * N * 2);
  cudaMalloc(&C, M * N * 2);
  fill<<<1024, 256>>>(A, M * K, 1);
  fill<<<1024, 256>>>(B, K * N, 2);
  auto run = [&] {
    auto s = tkc::kernels::gemm_none(A, B, C, M, N, K, 0);
    if (!s) {
      printf("%s\n", s.message.c_str());
      exit(1);
    }
  };
  for (int i = 0; i < 10; ++i) run();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ts;
  for (int r = 0; r < 50; ++r) {
    cudaEventRecord(a);
    run();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  printf("M=%lld N=%lld K=%lld median %.2f us %.1f TFLOP/s\n", M, N, K, ts[25] * 1e3,
         2.0 * M * N * K / ts[25] / 1e9);
#ifndef NO_TRACE
  std::vector<unsigned long long> z(132 * 48 * 4 * 16, 0);
  cudaMemcpyToSymbol(kittens::lcf::lcf_trace, z.data(), z.size() * 8);
  run();
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(z.data(), kittens::lcf::lcf_trace, z.size() * 8);
  FILE *f = fopen(argv[4], "wb");
  fwrite(z.data(), 8, z.size(), f);
  fclose(f);
#endif
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
