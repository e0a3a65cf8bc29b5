/**
 * @file
 * @brief Division by a launch-invariant divisor without a division instruction sequence.
 *
 * `fast_div(d)` (1 <= d <= INT_MAX) is built once, on the host, and passed to a kernel, which
 * then divides any 0 <= n <= INT_MAX by d with a multiply-high, an add and a shift. It
 * replaces the ~20-instruction sequence the compiler emits for `n / d` with d known only at
 * run time, which is on the critical path of task boundaries.
 *
 * With s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (which fits in 32 bits, as
 * 2^s - d < d), n / d = (mulhi(n, m) + n) >> s for every n < 2^32 whose sum does not wrap;
 * for n <= INT_MAX the sum stays below 2^32.
 */
#pragma once

#include <cstdint>

#include "config.cuh"

namespace kittens {

struct fast_div {
  int d = 1;
  uint32_t mul = 1;
  int shift = 0;

  fast_div() = default;
  /// d: 1 ... INT_MAX.
  KITTENS_HOST_DEVICE constexpr explicit fast_div(int divisor) : d(divisor) {
    int s = 0;
    while ((1ll << s) < divisor) ++s;
    shift = s;
    mul = static_cast<uint32_t>((((1ull << s) - static_cast<uint64_t>(divisor)) << 32) /
                                    static_cast<uint64_t>(divisor) + 1);
  }
  /// n / d for 0 <= n <= INT_MAX.
  KITTENS_HOST_DEVICE constexpr int div(int n) const {
    const uint32_t u = static_cast<uint32_t>(n);
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(u, mul);
#else
    const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(u) * mul) >> 32);
#endif
    return static_cast<int>((high + u) >> shift);
  }
  /// n % d for 0 <= n <= INT_MAX.
  KITTENS_HOST_DEVICE constexpr int mod(int n) const { return n - div(n) * d; }
};

} // namespace kittens
