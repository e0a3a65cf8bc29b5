// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// kittens::fast::tanh against tanh in double: a dense sweep of [-60, 60] and the points
// around 0, where the absolute error bound (5e-7, what the approximate ex2 and rcp and
// the final FMA add up to) is checked; the limits at +-inf and NaN through.
// kittens::fast::rcp against 1 / x in double: every binade of normal results, both signs,
// within one unit in the last place (relative 2^-23); the flushed and infinite cases.
// The other functions of the tile language, against double on a sweep: fast::sigmoid and
// fast::silu (approximate ex2 and rcp), gelu_erf (erff), and CUDA's sinf, cosf and powf as the
// tile language prints them. Each bound is the documented error with a margin; the worst
// error is printed.
#include "harness.cuh"

#include <cmath>

using namespace kittens;

__global__ void tanh_kernel(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = fast::tanh(x[i]);
}

/// Each of `xs` through `kernel` (one element a thread) into a poisoned output.
std::vector<float> run(void (*kernel)(const float *, float *, int), const std::vector<float> &xs) {
  const int n = static_cast<int>(xs.size());
  harness::dbuf<float> x(n), y(n);
  x.upload(xs);
  y.poison();
  kernel<<<(n + 255) / 256, 256>>>(x.p, y.p, n);
  CHECK_LAUNCH();
  return y.download();
}

__global__ void rcp_kernel(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = fast::rcp(x[i]);
}

void check_rcp() {
  std::vector<float> xs;
  for (int e = -125; e <= 125; ++e) // |1 / x| stays a normal number
    for (int m = 0; m < 256; ++m) {
      const float x =
          std::ldexp(1.0f + static_cast<float>(m) / 256.0f + 1.0f / 65536.0f * (m % 7), e);
      xs.push_back(x);
      xs.push_back(-x);
    }
  const int normal = static_cast<int>(xs.size());
  // +-0, +-inf, a subnormal input (flushed: +inf), 2^127 (its reciprocal is subnormal: +0).
  const std::vector<float> special = {
      0.0f, -0.0f, INFINITY, -INFINITY, 1e-40f, std::ldexp(1.0f, 127), NAN};
  xs.insert(xs.end(), special.begin(), special.end());
  const std::vector<float> got = run(rcp_kernel, xs);

  std::vector<double> want(normal);
  for (int i = 0; i < normal; ++i)
    want[i] = 1.0 / static_cast<double>(xs[i]);
  harness::expect_close("fast::rcp, relative error",
                        std::vector<float>(got.begin(), got.begin() + normal), want, 0,
                        std::ldexp(1.0, -23));
  double worst = 0;
  for (int i = 0; i < normal; ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]) / std::fabs(want[i]));
  std::printf("     fast::rcp: worst relative error %.3g over %d points\n", worst, normal);
  const float *g = got.data() + normal;
  const bool limits = g[0] == INFINITY && g[1] == -INFINITY && g[2] == 0.0f &&
                      !std::signbit(g[2]) && g[3] == 0.0f && std::signbit(g[3]) &&
                      g[4] == INFINITY && g[5] == 0.0f && std::isnan(g[6]);
  if (limits) {
    std::printf("ok   fast::rcp of +-0, +-inf, a subnormal, 2^127 and NaN\n");
  } else {
    std::printf("FAIL fast::rcp of +-0, +-inf, 1e-40, 2^127, NaN gave %g %g %g %g %g %g %g\n", g[0],
                g[1], g[2], g[3], g[4], g[5], g[6]);
    ++harness::failures;
  }
}

struct sigmoid_f {
  __device__ float operator()(float x) const { return fast::sigmoid(x); }
};
struct silu_f {
  __device__ float operator()(float x) const { return fast::silu(x); }
};
struct gelu_erf_f {
  __device__ float operator()(float x) const { return gelu_erf(x); }
};
struct sin_f {
  __device__ float operator()(float x) const { return sinf(x); }
};
struct cos_f {
  __device__ float operator()(float x) const { return cosf(x); }
};

template <class F> __global__ void unary_kernel(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = F{}(x[i]);
}

__global__ void pow_kernel(const float *x, const float *e, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = powf(x[i], e[i]);
}

/// `f` on the GPU over `xs` against `ref` in double, |got - want| <= atol + rtol |want|.
template <class F>
void check_unary(const char *what, double (*ref)(double), const std::vector<float> &xs, double atol,
                 double rtol) {
  const std::vector<float> got = run(unary_kernel<F>, xs);
  std::vector<double> want(xs.size());
  double worst_abs = 0, worst_rel = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    want[i] = ref(static_cast<double>(xs[i]));
    const double d = std::fabs(got[i] - want[i]);
    worst_abs = std::fmax(worst_abs, d);
    if (std::fabs(want[i]) > 1e-30)
      worst_rel = std::fmax(worst_rel, d / std::fabs(want[i]));
  }
  harness::expect_close(what, got, want, atol, rtol);
  std::printf("     %s: worst absolute error %.3g, relative %.3g over %zu points\n", what,
              worst_abs, worst_rel, xs.size());
}

void check_functions() {
  std::vector<float> wide, small;
  const int sweep = 1 << 18;
  for (int i = 0; i <= sweep; ++i)
    wide.push_back(-100.0f + 200.0f * static_cast<float>(i) / sweep);
  for (int i = 0; i <= sweep; ++i)
    small.push_back(-8.0f + 16.0f * static_cast<float>(i) / sweep);
  // ex2.approx and rcp.approx: each about 2^-22 relative; sigmoid in (0, 1].
  check_unary<sigmoid_f>(
      "fast::sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, wide, 1e-6, 1e-5);
  check_unary<silu_f>(
      "fast::silu", [](double x) { return x / (1.0 + std::exp(-x)); }, wide, 1e-6, 1e-5);
  // erff: 2 units in the last place.
  check_unary<gelu_erf_f>(
      "gelu_erf", [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }, small,
      1e-6, 1e-6);
  // sinf, cosf: 2 units in the last place over the whole range (a slow path past |x| > 105615).
  check_unary<sin_f>(
      "sinf", [](double x) { return std::sin(x); }, wide, 5e-7, 0);
  check_unary<cos_f>(
      "cosf", [](double x) { return std::cos(x); }, wide, 5e-7, 0);
  // powf: 4 units in the last place; x > 0, exponents in [-4, 4].
  std::vector<float> xs, es;
  for (int i = 1; i <= 512; ++i)
    for (int j = 0; j <= 64; ++j) {
      xs.push_back(static_cast<float>(i) / 16.0f);
      es.push_back(-4.0f + 8.0f * static_cast<float>(j) / 64.0f);
    }
  const int n = static_cast<int>(xs.size());
  harness::dbuf<float> x(n), e(n), y(n);
  x.upload(xs);
  e.upload(es);
  y.poison();
  pow_kernel<<<(n + 255) / 256, 256>>>(x.p, e.p, y.p, n);
  CHECK_LAUNCH();
  const std::vector<float> got = y.download();
  std::vector<double> want(n);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    want[i] = std::pow(static_cast<double>(xs[i]), static_cast<double>(es[i]));
    worst = std::fmax(worst, std::fabs(got[i] - want[i]) / want[i]);
  }
  harness::expect_close("powf", got, want, 0, 1e-6);
  std::printf("     powf: worst relative error %.3g over %d points\n", worst, n);
}

int main() {
  check_rcp();
  check_functions();
  std::vector<float> xs;
  const int sweep = 1 << 20;
  for (int i = 0; i <= sweep; ++i)
    xs.push_back(-60.0f + 120.0f * static_cast<float>(i) / sweep);
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
  const std::vector<float> got = run(tanh_kernel, xs);

  std::vector<double> want(finite);
  for (int i = 0; i < finite; ++i)
    want[i] = std::tanh(static_cast<double>(xs[i]));
  harness::expect_close("fast::tanh, absolute error",
                        std::vector<float>(got.begin(), got.begin() + finite), want, 5e-7, 0);
  harness::expect_close("fast::tanh(+-inf)", {got[finite], got[finite + 1]}, {1.0, -1.0}, 0, 0);
  double worst = 0;
  for (int i = 0; i < finite; ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]));
  std::printf("     fast::tanh: worst absolute error %.3g over %d points\n", worst, finite);
  if (std::isnan(got[finite + 2])) {
    std::printf("ok   fast::tanh(NaN) is NaN\n");
  } else {
    std::printf("FAIL fast::tanh(NaN) gave %g\n", got[finite + 2]);
    ++harness::failures;
  }
  return harness::finish("fast_math");
}
