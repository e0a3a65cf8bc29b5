// Timeline of one attention launcher built against the patched LCF template (patch_lcf.py):
// times the launch (median of 20), then runs it once more with the trace zeroed and writes the
// trace to the file named last.  Usage: harness B H N trace.bin
#include KERNEL_CU
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
__global__ void fill(__nv_bfloat16 *p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    p[i] = __float2bfloat16(((x & 0xffff) / 65536.0f - 0.5f) * 3.0f);
  }
}
int main(int argc, char **argv) {
  long long B = atoll(argv[1]), H = atoll(argv[2]), N = atoll(argv[3]);
  const char *out = argv[4];
  long long n = B * H * N * HEAD_D;
  __nv_bfloat16 *Q, *K, *V, *O; float *L;
  cudaMalloc(&Q, n * 2); cudaMalloc(&K, n * 2); cudaMalloc(&V, n * 2); cudaMalloc(&O, n * 2); cudaMalloc(&L, B * H * N * 4);
  fill<<<1024, 256>>>(Q, n, 1); fill<<<1024, 256>>>(K, n, 2); fill<<<1024, 256>>>(V, n, 3);
  auto run = [&] { auto s = LAUNCHER(Q, K, V, O, L, B, H, N, H, 1.0f / sqrtf(HEAD_D), 0); if (!s) { printf("%s\n", s.message.c_str()); exit(1); } };
  for (int i = 0; i < 5; ++i) run();
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int r = 0; r < 20; ++r) { cudaEventRecord(a); run(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms); }
  std::sort(ts.begin(), ts.end());
  double fl = 4.0 * B * H * N * N * HEAD_D / (CAUSAL ? 2 : 1);
  printf("D=%d B=%lld H=%lld N=%lld median %.1f us %.1f TFLOP/s\n", HEAD_D, B, H, N, ts[10] * 1e3, fl / ts[10] / 1e9);
#ifndef NO_TRACE
  std::vector<unsigned long long> z(132 * 48 * 4 * 16, 0);
  cudaMemcpyToSymbol(kittens::lcf::lcf_trace, z.data(), z.size() * 8);
  run(); cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(z.data(), kittens::lcf::lcf_trace, z.size() * 8);
  FILE *f = fopen(out, "wb"); fwrite(z.data(), 8, z.size(), f); fclose(f);
#endif
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
