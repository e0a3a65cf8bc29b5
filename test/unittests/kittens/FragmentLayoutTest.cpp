//===- FragmentLayoutTest.cpp - register fragment maps ------------------===//
#include <kittens/types/register/fragment_layout.cuh>

#include <gtest/gtest.h>

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
