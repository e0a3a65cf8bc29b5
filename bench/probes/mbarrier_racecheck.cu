// Probe: does compute-sanitizer racecheck order generic shared-memory accesses by mbarrier
// release/acquire? Warp 0 writes a buffer and arrives (release); warp 1 waits (acquire),
// reads, and arrives on a second barrier; warp 0 waits on it and writes again (WAR). The
// program is correct (it prints "no error 34"); racecheck on an H100 (CUDA 13) reports
// hazards between the reads and the next writes all the same: it does not model the
// ordering, so its reports on kernels whose producer writes the stage with ordinary stores
// (the columns read per column) are of this kind.
//   nvcc -gencode=arch=compute_90a,code=sm_90a -o mbarrier_racecheck mbarrier_racecheck.cu
//   compute-sanitizer --tool racecheck ./mbarrier_racecheck
#include <cstdio>
#include <cstdint>
__device__ uint32_t addr(void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ void arrive(uint64_t &b) { asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(addr(&b)) : "memory"); }
__device__ void wait(uint64_t &b, int parity) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}" ::"r"(addr(&b)), "r"(parity) : "memory");
}
__global__ void probe(float *out) {
  __shared__ float buf[64];
  __shared__ uint64_t full, empty;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(addr(&full)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(addr(&empty)));
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  float acc = 0;
  for (int it = 0; it < 4; ++it) {
    if (threadIdx.x < 32) {           // producer warp
      if (it > 0) wait(empty, (it - 1) & 1);
      buf[lane] = it + lane; buf[lane + 32] = it;
      arrive(full);
    } else {                          // consumer warp
      wait(full, it & 1);
      acc += buf[(lane * 7) % 64];
      __syncwarp();
      if (lane == 0) arrive(empty);
    }
  }
  if (threadIdx.x >= 32) out[lane] = acc;
}
int main() {
  float *d; cudaMalloc(&d, 32 * sizeof(float));
  probe<<<1, 64>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  float h[32]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s %g\n", cudaGetErrorString(e), h[1]);
  return 0;
}
