// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// kittens::fast::tanh against tanh in double: a dense sweep of [-60, 60] and the points
// around 0, where the absolute error bound (5e-7, what the approximate ex2 and rcp and
// the final FMA add up to) is checked; the limits at +-inf and NaN through.
#include "harness.cuh"

#include <cmath>

using namespace kittens;

__global__ void tanh_kernel(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fast::tanh(x[i]);
}

int main() {
  std::vector<float> xs;
  const int sweep = 1 << 20;
  for (int i = 0; i <= sweep; ++i) xs.push_back(-60.0f + 120.0f * static_cast<float>(i) / sweep);
  for (float t = 1e-30f; t < 1.0f; t *= 1.7f) { // around 0, both signs
    xs.push_back(t);
    xs.push_back(-t);
  }
  xs.push_back(0.0f);
  xs.push_back(-0.0f);
  const int finite = static_cast<int>(xs.size());
  xs.push_back(INFINITY);
  xs.push_back(-INFINITY);
  xs.push_back(NAN);
  const int n = static_cast<int>(xs.size());

  harness::dbuf<float> x(n), y(n);
  x.upload(xs);
  y.poison();
  tanh_kernel<<<(n + 255) / 256, 256>>>(x.p, y.p, n);
  CHECK_LAUNCH();
  const std::vector<float> got = y.download();

  std::vector<double> want(finite);
  for (int i = 0; i < finite; ++i) want[i] = std::tanh(static_cast<double>(xs[i]));
  harness::expect_close("fast::tanh, absolute error",
                        std::vector<float>(got.begin(), got.begin() + finite), want, 5e-7, 0);
  harness::expect_close("fast::tanh(+-inf)", {got[finite], got[finite + 1]}, {1.0, -1.0}, 0, 0);
  double worst = 0;
  for (int i = 0; i < finite; ++i) worst = std::fmax(worst, std::fabs(got[i] - want[i]));
  std::printf("     fast::tanh: worst absolute error %.3g over %d points\n", worst, finite);
  if (std::isnan(got[finite + 2])) {
    std::printf("ok   fast::tanh(NaN) is NaN\n");
  } else {
    std::printf("FAIL fast::tanh(NaN) gave %g\n", got[finite + 2]);
    ++harness::failures;
  }
  return harness::finish("fast_math");
}
