// Timeline of the generated gemm_none launcher built against the patched LCF template
// (bench/attention/timeline/patch_lcf.py): times the launch (median of 50 queued back to back,
// operands warm in L2 as in the benchmark), then runs it twice more with the trace zeroed and
// writes the second launch's trace to the file named last. Usage: harness M N K trace.bin
// With PRE=touch each timed launch and the traced one follow a kernel that reads the first four
// K slices of A and B (those the block's first stages load) into L2; with PRE=flush, a 256 MiB
// memset that evicts L2; otherwise (PRE unset or none) the previous launch of the GEMM itself.
// Built with -DTRACE_SYMBOL=<name> -DNO_TRACE, the file written is that array of the kernel source
// instead (a probe's own stamps, e.g. patch_boundary.py's kittens::lcf::bnd_trace).
#include KERNEL_CU
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
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
// Reads A[:, 0:kcols] and B[0:kcols, :] (row-major, 16-byte loads) so that they lie in L2.
__global__ void touch(const uint4 *A, const uint4 *B, long long M, long long N, long long K, int kcols,
                      unsigned *sink) {
  const long long a_row = kcols / 8, a_n = M * a_row, b_n = kcols * N / 8;
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < a_n + b_n;
       i += (long long)gridDim.x * blockDim.x) {
    const uint4 v = i < a_n ? A[(i / a_row) * (K / 8) + i % a_row] : B[i - a_n];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc; // keeps the loads
}
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
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
  const char *pre_env = getenv("PRE");
  const std::string pre = pre_env ? pre_env : "none";
  if (pre != "none" && pre != "touch" && pre != "flush") {
    fprintf(stderr, "PRE must be none, touch or flush, not '%s'\n", pre.c_str());
    return 2;
  }
  unsigned *sink;
  cudaMalloc(&sink, 4);
  void *flush_buf = nullptr;
  const size_t flush_bytes = 256ull << 20;
  if (pre == "flush") cudaMalloc(&flush_buf, flush_bytes);
  auto before = [&] {
    if (pre == "touch")
      touch<<<264, 512>>>((const uint4 *)A, (const uint4 *)B, M, N, K, (int)std::min(K, 256ll), sink);
    else if (pre == "flush")
      cudaMemsetAsync(flush_buf, 0, flush_bytes);
  };
  auto run = [&] {
    auto s = tkc::kernels::gemm_none(A, B, C, M, N, K, 0);
    if (!s) {
      printf("%s\n", s.message.c_str());
      exit(1);
    }
  };
  for (int i = 0; i < 10; ++i) run();
  // The rounds are queued behind a spin of ~0.1 s, so that the events time the GPU's work
  // alone, not the host's launch path (as bench/timing.py does).
  std::vector<cudaEvent_t> ev(100);
  for (auto &e : ev) cudaEventCreate(&e);
  cudaDeviceSynchronize();
  spin<<<1, 1>>>(200000000ll);
  for (int r = 0; r < 50; ++r) {
    before();
    cudaEventRecord(ev[2 * r]);
    run();
    cudaEventRecord(ev[2 * r + 1]);
  }
  cudaDeviceSynchronize();
  std::vector<float> ts;
  for (int r = 0; r < 50; ++r) {
    float ms;
    cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]);
    ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  printf("PRE=%s ", pre.c_str());
  printf("M=%lld N=%lld K=%lld median %.2f us %.1f TFLOP/s\n", M, N, K, ts[25] * 1e3,
         2.0 * M * N * K / ts[25] / 1e9);
#if defined(TRACE_SYMBOL) || !defined(NO_TRACE)
#ifndef TRACE_SYMBOL
#define TRACE_SYMBOL kittens::lcf::lcf_trace
#endif
  std::vector<unsigned long long> z(sizeof(TRACE_SYMBOL) / 8, 0);
  cudaMemcpyToSymbol(TRACE_SYMBOL, z.data(), z.size() * 8);
  run(); // the traced launch follows a launch of itself, as the timed ones do
  before();
  run();
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(z.data(), TRACE_SYMBOL, z.size() * 8);
  FILE *f = fopen(argv[4], "wb");
  fwrite(z.data(), 8, z.size(), f);
  fclose(f);
#endif
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
