/**
 * @file
 * @brief Shared helpers for the kittens GPU tests: checked CUDA calls, fresh random
 * inputs (seed printed), poisoned outputs, and comparisons against host references.
 *
 * Every test exits non-zero with a message naming the failing check.
 */
#pragma once

// A lost arrival or a wrong byte count becomes a trap with a message instead of a hang. The
// message's printf is a call inside every wait: ptxas serialises the wgmma of kernels that wait
// between products (warning C7510), which these checks, untimed, accept.
#ifndef KITTENS_WAIT_TIMEOUT_CYCLES
#define KITTENS_WAIT_TIMEOUT_CYCLES (1ll << 35)
#endif
#include <kittens/kittens.cuh>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(call) KITTENS_CUDA_CHECK(call)
#define CHECK_LAUNCH()                                                                                                 \
  do {                                                                                                                 \
    CHECK_CUDA(cudaGetLastError());                                                                                    \
    CHECK_CUDA(cudaDeviceSynchronize());                                                                               \
  } while (0)

namespace harness {

inline int failures = 0;

/// A generator seeded from the clock (or KITTENS_TEST_SEED); the seed is printed.
inline std::mt19937_64 &rng() {
  static std::mt19937_64 g = [] {
    uint64_t seed = std::chrono::high_resolution_clock::now().time_since_epoch().count();
    if (const char *s = std::getenv("KITTENS_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
    std::printf("seed %llu (set KITTENS_TEST_SEED to repeat)\n", (unsigned long long)seed);
    return std::mt19937_64(seed);
  }();
  return g;
}

/// n normal(0, 1) values, rounded through T so host and device see the same numbers.
template <class T> std::vector<float> randn(size_t n, float scale = 1.f) {
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (auto &x : v) x = kittens::convert<float>(kittens::convert<T>(d(rng())));
  return v;
}

template <class T> struct dbuf {
  T *p = nullptr;
  size_t n = 0;
  explicit dbuf(size_t n_) : n(n_) { CHECK_CUDA(cudaMalloc(&p, n * sizeof(T))); }
  ~dbuf() { cudaFree(p); }
  void upload(const std::vector<float> &v) {
    std::vector<T> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = kittens::convert<T>(v[i]);
    CHECK_CUDA(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  /// Fill with NaN (0xFF bytes), so an unwritten element can never pass.
  void poison() { CHECK_CUDA(cudaMemset(p, 0xFF, n * sizeof(T))); }
  std::vector<float> download() const {
    std::vector<T> h(n);
    CHECK_CUDA(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = kittens::convert<float>(h[i]);
    return v;
  }
};

/// Elementwise check |got - want| <= atol + rtol * |want| (NaN never passes). Reports the
/// first few mismatches and counts a failure.
inline bool expect_close(const char *what, const std::vector<float> &got, const std::vector<double> &want, double atol,
                         double rtol) {
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = (std::isinf(w) && g == w) || (std::fabs(g - w) <= atol + rtol * std::fabs(w));
    if (!ok || std::isnan(g)) {
      if (bad < 5) std::printf("  %s[%zu]: got %.6g want %.6g\n", what, i, g, w);
      ++bad;
      if (!std::isinf(w)) worst = std::fmax(worst, std::fabs(g - w));
    }
  }
  if (bad) {
    std::printf("FAIL %s: %zu of %zu elements wrong (worst |diff| %.3g)\n", what, bad, want.size(), worst);
    ++failures;
    return false;
  }
  std::printf("ok   %s (%zu elements)\n", what, want.size());
  return true;
}

/// Relative Frobenius error ||got - want|| / ||want||; fails above `bound` or on NaN.
inline bool expect_rel_err(const char *what, const std::vector<float> &got, const std::vector<double> &want, double bound) {
  double num = 0, den = 0;
  bool nan = false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i])) nan = true;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  const double rel = std::sqrt(num / (den > 0 ? den : 1));
  if (nan || !(rel <= bound)) {
    std::printf("FAIL %s: rel err %.3g (bound %.1g)%s\n", what, rel, bound, nan ? ", NaN present" : "");
    ++failures;
    return false;
  }
  std::printf("ok   %s (rel err %.3g)\n", what, rel);
  return true;
}

inline int finish(const char *name) {
  if (failures) {
    std::printf("%s: %d check(s) FAILED\n", name, failures);
    return 1;
  }
  std::printf("%s: all checks passed\n", name);
  return 0;
}

} // namespace harness
