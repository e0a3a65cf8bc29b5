//===- StreamKTest.cpp - stream-K shares of a last partial wave -----------===//
#include <kittens/lcf/stream_k.cuh>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

using kittens::stream_k_contributes;
using kittens::stream_k_part;
using kittens::stream_k_part_of;
using kittens::stream_k_pays;

namespace {

// Checks every property the kernel relies on for one (blocks, shared tiles, steps) case:
// the parts cover each shared tile's steps exactly once; each tile is finished by exactly one
// part, its block's last, which ends at the tile's last step; every other part of a tile is
// its block's first and only non-finishing part, by a block of lower index than the
// finisher's, found by stream_k_contributes; every block has a part.
void checkShares(int blocks, int shared, int kc) {
  SCOPED_TRACE(testing::Message() << blocks << " blocks, " << shared << " tiles of " << kc);
  const long long units = (long long)shared * kc;
  std::vector<int> owner(units, -1);
  std::map<int, int> finisher;
  std::map<int, std::vector<int>> contributors;
  for (int b = 0; b < blocks; ++b) {
    const stream_k_part p0 = stream_k_part_of(b, blocks, shared, kc, 0);
    const stream_k_part p1 = stream_k_part_of(b, blocks, shared, kc, 1);
    EXPECT_EQ(stream_k_part_of(b, blocks, shared, kc, 2).iters, 0);
    ASSERT_GT(p0.iters, 0) << "block " << b << " has no share";
    int contributing = 0;
    for (const stream_k_part &p : {p0, p1}) {
      if (p.iters == 0)
        continue;
      ASSERT_GE(p.tile, 0);
      ASSERT_LT(p.tile, shared);
      ASSERT_GE(p.k0, 0);
      ASSERT_LE(p.k0 + p.iters, kc);
      EXPECT_EQ(p.finishes, p.k0 + p.iters == kc);
      for (int k = p.k0; k < p.k0 + p.iters; ++k) {
        long long u = (long long)p.tile * kc + k;
        ASSERT_EQ(owner[u], -1) << "step " << k << " of tile " << p.tile << " twice";
        owner[u] = b;
      }
      if (p.finishes) {
        ASSERT_FALSE(finisher.count(p.tile)) << "tile " << p.tile << " finished twice";
        finisher[p.tile] = b;
        if (p1.iters > 0 && &p == &p0 && !p1.finishes)
          ADD_FAILURE() << "block " << b << " runs a part that waits before one it publishes";
      } else {
        ++contributing;
        contributors[p.tile].push_back(b);
      }
    }
    EXPECT_LE(contributing, 1) << "block " << b << " would publish two partials into one slot";
    if (p1.iters > 0)
      EXPECT_FALSE(p0.finishes && !p1.finishes) << "block " << b;
  }
  for (long long u = 0; u < units; ++u)
    ASSERT_NE(owner[u], -1) << "step " << u % kc << " of tile " << u / kc << " never run";
  for (int t = 0; t < shared; ++t) {
    ASSERT_TRUE(finisher.count(t)) << "tile " << t << " never finished";
    const int f = finisher[t];
    std::vector<int> found;
    for (int c = f - 1; stream_k_contributes(c, blocks, shared, kc, t); --c)
      found.push_back(c);
    std::vector<int> expected = contributors[t];
    std::sort(expected.begin(), expected.end(), std::greater<int>());
    EXPECT_EQ(found, expected) << "tile " << t;
    for (int c : expected)
      EXPECT_LT(c, f);
  }
}

} // namespace

TEST(StreamK, FileCommentExample) {
  // 4 blocks, 3 tiles of 8 steps: the example in stream_k.cuh.
  auto p = [](int b, int part) { return stream_k_part_of(b, 4, 3, 8, part); };
  EXPECT_EQ(p(0, 0).tile, 0); EXPECT_EQ(p(0, 0).k0, 0); EXPECT_EQ(p(0, 0).iters, 6); EXPECT_FALSE(p(0, 0).finishes);
  EXPECT_EQ(p(0, 1).iters, 0);
  EXPECT_EQ(p(1, 0).tile, 1); EXPECT_EQ(p(1, 0).k0, 0); EXPECT_EQ(p(1, 0).iters, 4); EXPECT_FALSE(p(1, 0).finishes);
  EXPECT_EQ(p(1, 1).tile, 0); EXPECT_EQ(p(1, 1).k0, 6); EXPECT_EQ(p(1, 1).iters, 2); EXPECT_TRUE(p(1, 1).finishes);
  EXPECT_EQ(p(2, 0).tile, 2); EXPECT_EQ(p(2, 0).iters, 2); EXPECT_FALSE(p(2, 0).finishes);
  EXPECT_EQ(p(2, 1).tile, 1); EXPECT_EQ(p(2, 1).k0, 4); EXPECT_TRUE(p(2, 1).finishes);
  EXPECT_EQ(p(3, 0).tile, 2); EXPECT_EQ(p(3, 0).k0, 2); EXPECT_EQ(p(3, 0).iters, 6); EXPECT_TRUE(p(3, 0).finishes);
  checkShares(4, 3, 8);
}

TEST(StreamK, AnchorShapesOnAnH100) {
  // 128 x 256 tiles of 64-step slices on 132 blocks.
  checkShares(132, 116, 64);  // 4096^3 (pays not: see below)
  checkShares(132, 68, 128);  // 8192^3
  checkShares(132, 68, 448);  // 8192^2 x 28672
  checkShares(132, 68, 64);   // 16384 x 4096^2
  checkShares(132, 76, 64);   // 4096 x 14336 x 4096
  EXPECT_FALSE(stream_k_pays(128, 132, 32));   // 2048^3: one wave
  EXPECT_FALSE(stream_k_pays(512, 132, 64));   // 4096^3: a share 7.8 steps short of a tile
  EXPECT_TRUE(stream_k_pays(2048, 132, 128));  // 8192^3: 62 short
  EXPECT_TRUE(stream_k_pays(2048, 132, 448));  // 8192^2 x 28672
  EXPECT_TRUE(stream_k_pays(2048, 132, 64));   // 16384 x 4096^2: 31 short
  EXPECT_TRUE(stream_k_pays(1792, 132, 64));   // 4096 x 14336 x 4096: 27 short
}

TEST(StreamK, PaysOnlyForAPartialWaveWithShareAndSaving) {
  EXPECT_FALSE(stream_k_pays(264, 132, 64));   // whole waves
  EXPECT_FALSE(stream_k_pays(100, 132, 64));   // less than a wave
  EXPECT_FALSE(stream_k_pays(133, 132, 64));   // one tile left: shares of 0.5 steps
  EXPECT_FALSE(stream_k_pays(200, 132, 1));    // one step a tile
  EXPECT_TRUE(stream_k_pays(140, 132, 400));   // 8 tiles of 400 steps: shares of 24
  EXPECT_FALSE(stream_k_pays(140, 0, 400));
  // The saving, exactly at the bound: k_count - units / blocks >= 16.
  EXPECT_FALSE(stream_k_pays(12, 4, 32));         // whole waves
  EXPECT_FALSE(stream_k_pays(3, 4, 32));          // less than a wave
  EXPECT_TRUE(stream_k_pays(4 + 2, 4, 32));       // shares of 16: saving 16
  EXPECT_FALSE(stream_k_pays(4 + 3, 4, 32));      // shares of 24: saving 8
}

TEST(StreamK, SharesHoldTheirPropertiesEverywhere) {
  std::mt19937 rng(7);
  for (int i = 0; i < 4000; ++i) {
    const int blocks = std::uniform_int_distribution<int>(1, 200)(rng);
    const int shared = std::uniform_int_distribution<int>(1, blocks > 1 ? blocks - 1 : 1)(rng);
    const int kc = std::uniform_int_distribution<int>(1, 600)(rng);
    if ((long long)shared * kc < (long long)kittens::STREAM_K_MIN_SHARE * blocks || shared >= blocks)
      continue;
    checkShares(blocks, shared, kc);
    if (testing::Test::HasFailure())
      return;
  }
}
