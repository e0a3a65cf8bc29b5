//===- TilesTest.cpp - a loop's tiles with a tail (compiled as C++17) -----===//
#include "tkc/runtime/Tiles.h"

#include <gtest/gtest.h>

namespace {

using tkc::runtime::coverWithTail;
using tkc::runtime::TailCover;

// Every cover, full tiles from none up to the full-only one, compared as the
// header promises: least computed past the end, then fewest tiles, then most full.
TailCover exhaustive(long long extent, long long step, long long tail) {
  TailCover best{(extent + step - 1) / step, 0};
  auto past = [&](const TailCover &c) { return c.full * step + c.tail * tail - extent; };
  for (long long full = 0; full <= (extent + step - 1) / step; ++full) {
    long long rest = extent - full * step;
    TailCover c{full, rest > 0 ? (rest + tail - 1) / tail : 0};
    long long dp = past(c) - past(best), dn = (c.full + c.tail) - (best.full + best.tail);
    if (dp < 0 || (dp == 0 && (dn < 0 || (dn == 0 && c.full > best.full))))
      best = c;
  }
  return best;
}

TEST(RuntimeTiles, AttentionSizes) {
  // 192-key tiles ending in 128-key ones: nothing past N at the benchmark's sizes.
  struct Case {
    long long n, full, tail;
  } cases[] = {{1024, 4, 2},  {2048, 10, 1}, {4096, 20, 2}, {8192, 42, 1}, {16384, 84, 2},
               {2000, 10, 1}, {192, 1, 0},   {100, 0, 1},   {1, 0, 1}};
  for (const Case &c : cases) {
    TailCover got = coverWithTail(c.n, 192, 128);
    EXPECT_EQ(got.full, c.full) << "N = " << c.n;
    EXPECT_EQ(got.tail, c.tail) << "N = " << c.n;
  }
}

TEST(RuntimeTiles, MatchesEveryCover) {
  const long long widths[][2] = {{192, 128}, {192, 64}, {176, 128}, {128, 64}, {128, 48}, {64, 16}};
  for (const auto &w : widths)
    for (long long n = 1; n <= 3000; ++n) {
      TailCover got = coverWithTail(n, w[0], w[1]), want = exhaustive(n, w[0], w[1]);
      ASSERT_GE(got.full * w[0] + got.tail * w[1], n) << n << " " << w[0] << " " << w[1];
      ASSERT_EQ(got.full, want.full) << n << " " << w[0] << " " << w[1];
      ASSERT_EQ(got.tail, want.tail) << n << " " << w[0] << " " << w[1];
    }
}

TEST(RuntimeTiles, NothingToCover) {
  TailCover none = coverWithTail(0, 192, 128);
  EXPECT_EQ(none.full + none.tail, 0);
  none = coverWithTail(-5, 192, 128);
  EXPECT_EQ(none.full + none.tail, 0);
}

} // namespace
