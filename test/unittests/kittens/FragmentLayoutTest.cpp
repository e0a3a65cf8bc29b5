//===- FragmentLayoutTest.cpp - register fragment maps ------------------===//
#include <kittens/common/swizzle.cuh>
#include <kittens/types/register/fragment_layout.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

using namespace kittens::fragment;

TEST(Fragment, RowLayoutCoversTileOnce) {
  int hits[16][16] = {};
  for (int l = 0; l < 32; ++l)
    for (int k = 0; k < 4; ++k)
      for (int h = 0; h < 2; ++h) {
        rc p = row_layout(l, k, h);
        ASSERT_GE(p.row, 0); ASSERT_LT(p.row, 16); ASSERT_GE(p.col, 0); ASSERT_LT(p.col, 16);
        ++hits[p.row][p.col];
      }
  for (auto &row : hits)
    for (int v : row) EXPECT_EQ(v, 1);
}

TEST(Fragment, ColLayoutIsTransposeOfRowLayout) {
  for (int l = 0; l < 32; ++l)
    for (int k = 0; k < 4; ++k)
      for (int h = 0; h < 2; ++h) {
        rc a = row_layout(l, k, h), b = col_layout(l, k, h);
        EXPECT_EQ(a.row, b.col);
        EXPECT_EQ(a.col, b.row);
      }
}

TEST(Fragment, MatchesMmaM16N8K16Documentation) {
  // mma.m16n8k16 A fragment: a0,a1 = (g, 2q..2q+1), a2,a3 = (g+8, ...), a4,a5 = (g, 2q+8..),
  // a6,a7 = (g+8, 2q+8..). Our data[k] pairs are (a[2k], a[2k+1]).
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, q = l % 4;
    for (int i = 0; i < 8; ++i) {
      const int row = g + 8 * ((i / 2) % 2);
      const int col = 2 * q + (i % 2) + 8 * (i / 4);
      rc p = row_layout(l, i / 2, i % 2);
      EXPECT_EQ(p.row, row) << "lane " << l << " a" << i;
      EXPECT_EQ(p.col, col) << "lane " << l << " a" << i;
    }
  }
}

TEST(Fragment, LdmatrixX4Order) {
  // ldmatrix.x4: matrix m is read from rows 8*(m&1).. and cols 8*(m>>1).. of the 16x16
  // block (lane l supplies row l%16, col 8*(l/16)); thread l receives row l/4, cols
  // 2(l%4).. of matrix m in register m. That must equal data[m] of the row layout.
  for (int l = 0; l < 32; ++l)
    for (int m = 0; m < 4; ++m) {
      const int row = 8 * (m & 1) + l / 4, col = 8 * (m >> 1) + 2 * (l % 4);
      rc p = row_layout(l, m, 0);
      EXPECT_EQ(p.row, row);
      EXPECT_EQ(p.col, col);
    }
}

// A row-layout float fragment stored into a shared float tile, one 8-byte access a pair:
// the banks each half-warp's access covers (a half-warp's 16 lanes x 8 bytes take one
// wavefront when they cover the 32 banks once). Under the 64-byte swizzle the store takes
// the blocks in the order fragment::swizzle64_block gives; the plain order is the other
// swizzles' (and the 64-byte one's before it, which collided pairwise).
namespace {
template <class Block>
int worst_bank_use(int swizzle_bytes, Block block) {
  constexpr int R = 16, C = 64; // one warp's rows of the attention backward's dQ
  int worst = 0;
  for (int j = 0; j < C / 16; ++j)
    for (int h = 0; h < 2; ++h)
      for (int access = 0; access < 2; ++access)
        for (int half_warp = 0; half_warp < 2; ++half_warp) {
          int use[32] = {};
          for (int l = 16 * half_warp; l < 16 * half_warp + 16; ++l) {
            const auto p = kittens::fragment::row_layout(l, h + 2 * block(l, access), 0);
            const uint32_t off =
                kittens::layout::tile_offset(p.row, 16 * j + p.col, R, C, 4, swizzle_bytes);
            for (int word = 0; word < 2; ++word)
              worst = std::max(worst, ++use[(off / 4 + word) % 32]);
          }
        }
  return worst;
}
} // namespace

TEST(Fragment, FloatStoresFillTheBanksOnce) {
  auto plain = [](int, int access) { return access; };
  auto ordered = [](int lane, int access) { return kittens::fragment::swizzle64_block(lane, access); };
  EXPECT_EQ(worst_bank_use(32, plain), 1);
  EXPECT_EQ(worst_bank_use(64, ordered), 1);
  EXPECT_EQ(worst_bank_use(64, plain), 2) << "the plain order collides under 64 bytes";
  EXPECT_EQ(worst_bank_use(128, plain), 2);
  // Every element once: the two accesses of a lane store both of its blocks.
  for (int l = 0; l < 32; ++l)
    EXPECT_NE(kittens::fragment::swizzle64_block(l, 0), kittens::fragment::swizzle64_block(l, 1));
}
