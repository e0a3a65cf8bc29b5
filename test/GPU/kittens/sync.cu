// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// mbarrier semaphores, named barriers and setmaxnreg:
//  - a fresh semaphore reports the parity-1 phase complete (test_wait) and parity 0 not;
//  - two warps ping-pong 200 rounds through a pair of semaphores with 32-arrival phases,
//    each round reading what the other wrote (a lost or early wake-up breaks the sum);
//  - a producer warpgroup hands 64 rounds of data to a consumer warpgroup through named
//    barriers, once with bar.sync on both sides and once with bar.arrive / bar.sync (the
//    arrive form is skipped when KITTENS_SKIP_BAR_ARRIVE is set: compute-sanitizer's
//    racecheck does not credit bar.arrive with ordering and reports the handoff);
//  - a 3-warpgroup kernel lowers one warpgroup's registers to 40 and raises two to 232
//    and still computes correct results.
#include "harness.cuh"

using namespace kittens;

__global__ void pingpong(int *out, int rounds) {
  __shared__ semaphore ping, pong;
  __shared__ int slot;
  __shared__ int fresh_ok;
  if (threadIdx.x == 0) {
    init_semaphore(ping, 32);
    init_semaphore(pong, 32);
    fence_semaphore_init();
    slot = 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) fresh_ok = test_wait(ping, 1) && !test_wait(ping, 0);
  int acc = 0;
  for (int r = 0; r < rounds; ++r) {
    if (warpid() == 0) {
      if (r > 0) wait(pong, (r - 1) & 1);
      if (laneid() == 0) slot = slot + r; // visible to warp 1 through the release/acquire of `ping`
      __syncwarp();
      arrive(ping);
    } else {
      wait(ping, r & 1);
      acc += slot;
      __syncwarp();
      arrive(pong);
    }
  }
  __syncthreads();
  if (threadIdx.x == 32) { out[0] = acc; out[1] = fresh_ok; }
}

// 288 threads: warp 8 takes no part, so the 256-thread named barriers are partial ones.
template <bool ARRIVE> __global__ void named(int *out, int rounds) {
  __shared__ int buf[128];
  if (warpid() == 8) return;
  int acc = 0;
  for (int r = 0; r < rounds; ++r) {
    if constexpr (ARRIVE) { // producer arrives, consumer waits: a one-way handoff
      if (warpgroupid() == 0) {
        if (r > 0) named_sync(2, 256); // the consumer has read the previous round
        buf[threadIdx.x] = r * 1000 + threadIdx.x;
        named_arrive(1, 256);
      } else {
        named_sync(1, 256);
        acc += buf[127 - (threadIdx.x - 128)];
        if (r + 1 < rounds) named_arrive(2, 256);
      }
    } else { // both sides wait at the same barriers
      if (warpgroupid() == 0) buf[threadIdx.x] = r * 1000 + threadIdx.x;
      named_sync(1, 256);
      if (warpgroupid() == 1) acc += buf[127 - (threadIdx.x - 128)];
      named_sync(2, 256);
    }
  }
  if (warpgroupid() == 1) out[threadIdx.x - 128] = acc;
}

__global__ __launch_bounds__(384, 1) void regs(float *out) {
  if (warpgroupid() == 2) {
    warpgroup::decrease_registers<40>();
    out[threadIdx.x] = float(threadIdx.x);
  } else {
    warpgroup::increase_registers<232>();
    float acc[64];
    for (int i = 0; i < 64; ++i) acc[i] = float(threadIdx.x + i);
    float s = 0;
    for (int i = 0; i < 64; ++i) s += acc[i] * acc[i];
    out[threadIdx.x] = s;
  }
}

int main() {
  harness::rng();
  int rounds = 200;
  int *d;
  CHECK_CUDA(cudaMalloc(&d, 256 * sizeof(int)));
  CHECK_CUDA(cudaMemset(d, 0xFF, 256 * sizeof(int)));
  pingpong<<<1, 64>>>(d, rounds);
  CHECK_LAUNCH();
  int h[2];
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  long want = 0, slot = 0;
  for (int r = 0; r < rounds; ++r) { slot += r; want += slot; }
  std::vector<double> w1 = {double(want), 1.0};
  harness::expect_close("mbarrier ping-pong sum + fresh parity", {float(h[0]), float(h[1])}, w1, 0, 0);

  for (int arrive_form = 0; arrive_form < 2; ++arrive_form) {
    if (const char *e = std::getenv("KITTENS_SKIP_BAR_ARRIVE"); arrive_form && e && *e) {
      std::printf("skip named barrier bar.arrive handoff (KITTENS_SKIP_BAR_ARRIVE)\n");
      continue;
    }
    CHECK_CUDA(cudaMemset(d, 0xFF, 256 * sizeof(int)));
    if (arrive_form) named<true><<<1, 288>>>(d, 64);
    else named<false><<<1, 288>>>(d, 64);
    CHECK_LAUNCH();
    std::vector<int> hn(128);
    CHECK_CUDA(cudaMemcpy(hn.data(), d, 128 * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<float> got(128);
    std::vector<double> ref(128);
    for (int t = 0; t < 128; ++t) {
      got[t] = float(hn[t]);
      double s = 0;
      for (int r = 0; r < 64; ++r) s += r * 1000 + (127 - t);
      ref[t] = s;
    }
    harness::expect_close(arrive_form ? "named barrier handoff, bar.arrive + bar.sync" : "named barrier handoff, bar.sync both sides",
                          got, ref, 0, 0);
  }

  float *df;
  CHECK_CUDA(cudaMalloc(&df, 384 * sizeof(float)));
  CHECK_CUDA(cudaMemset(df, 0xFF, 384 * sizeof(float)));
  regs<<<1, 384>>>(df);
  CHECK_LAUNCH();
  std::vector<float> hf(384);
  CHECK_CUDA(cudaMemcpy(hf.data(), df, 384 * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> rf(384);
  for (int t = 0; t < 384; ++t) {
    if (t >= 256) rf[t] = t;
    else { double s = 0; for (int i = 0; i < 64; ++i) s += double(t + i) * (t + i); rf[t] = s; }
  }
  harness::expect_close("setmaxnreg 40/232 kernel", hf, rf, 0, 1e-6);
  cudaFree(d);
  cudaFree(df);
  return harness::finish("sync");
}
