//===- FastDivTest.cpp - division by launch-invariant divisors ----------===//
#include <kittens/common/fast_div.cuh>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using kittens::fast_div;

namespace {
constexpr int kMaxInt = 2147483647;

void expectExact(int d, int n) {
  const fast_div f(d);
  ASSERT_EQ(f.div(n), n / d) << n << " / " << d << " (mul " << f.mul << ", shift " << f.shift << ")";
  ASSERT_EQ(f.mod(n), n % d) << n << " % " << d;
}

std::vector<int> divisors() {
  std::vector<int> ds;
  for (int d = 1; d <= 300; ++d) ds.push_back(d);
  for (int s = 9; s <= 30; ++s)
    for (int delta : {-1, 0, 1}) ds.push_back((1 << s) + delta);
  for (int d : {1000003, 99999989, 715827883, 1073741823, kMaxInt - 1, kMaxInt}) ds.push_back(d);
  return ds;
}
} // namespace

TEST(FastDiv, ExactAtTheEdgesOfEveryQuotient) {
  for (int d : divisors()) {
    std::vector<long long> ns = {0, 1, 2, d - 1LL, d, d + 1LL, 2LL * d - 1, 2LL * d, kMaxInt - 1LL, kMaxInt};
    // The largest multiples of d that fit, and their neighbours.
    const long long top = (kMaxInt / d) * static_cast<long long>(d);
    for (long long n : {top - 1, top, top + 1, top - d, top - d + 1}) ns.push_back(n);
    for (long long n : ns)
      if (n >= 0 && n <= kMaxInt) expectExact(d, static_cast<int>(n));
  }
}

TEST(FastDiv, ExactOnPseudoRandomNumerators) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) & 0x7fffffff);
  };
  for (int d : divisors())
    for (int k = 0; k < 2000; ++k) expectExact(d, next());
}

TEST(FastDiv, ExactOnEveryNumeratorBelow2To24ForTaskCounts) {
  // Counts the launchers divide by: tiles along a dimension and grid sizes.
  for (int d : {3, 6, 11, 16, 86, 132}) {
    const fast_div f(d);
    for (int n = 0; n < (1 << 24); ++n)
      if (f.div(n) != n / d) FAIL() << n << " / " << d;
  }
}

TEST(FastDiv, DividesByOneAndByPowersOfTwoAsShifts) {
  EXPECT_EQ(fast_div(1).shift, 0);
  EXPECT_EQ(fast_div(1).div(kMaxInt), kMaxInt);
  EXPECT_EQ(fast_div(64).shift, 6);
  EXPECT_EQ(fast_div(64).div(1000), 15);
  EXPECT_EQ(fast_div(65).shift, 7);
}
