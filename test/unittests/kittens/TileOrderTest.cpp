//===- TileOrderTest.cpp - persistent task orders -----------------------===//
#include <kittens/lcf/tile_order.cuh>

#include <gtest/gtest.h>

#include <set>
#include <utility>

using kittens::grouped_order;

TEST(TileOrder, GroupedIsABijection) {
  for (int m : {1, 3, 8, 16, 17, 32})
    for (int n : {1, 2, 16, 19})
      for (int g : {1, 4, 8, 16}) {
        std::set<std::pair<int, int>> seen;
        for (int t = 0; t < m * n; ++t) {
          auto p = grouped_order(t, m, n, g);
          ASSERT_GE(p.m, 0); ASSERT_LT(p.m, m); ASSERT_GE(p.n, 0); ASSERT_LT(p.n, n);
          ASSERT_TRUE(seen.insert({p.m, p.n}).second) << m << "x" << n << " g" << g << " t" << t;
        }
      }
}

TEST(TileOrder, GroupedWalksDownAColumnFirst) {
  auto a = grouped_order(0, 4, 3, 2), b = grouped_order(1, 4, 3, 2), c = grouped_order(2, 4, 3, 2);
  EXPECT_EQ(a.m, 0); EXPECT_EQ(a.n, 0);
  EXPECT_EQ(b.m, 1); EXPECT_EQ(b.n, 0);
  EXPECT_EQ(c.m, 0); EXPECT_EQ(c.n, 1);
  auto d = grouped_order(6, 4, 3, 2);
  EXPECT_EQ(d.m, 2); EXPECT_EQ(d.n, 0);
}

TEST(TileOrder, ConcurrentTasksTouchFewRowsAndColumns) {
  // 132 consecutive tasks on a 32 x 16 grid of 128x256 tiles with groups of 8 rows touch
  // at most 8 distinct m values per group and ~17 n values: far fewer than row-major's 16 n.
  std::set<int> ms, ns;
  for (int t = 0; t < 132; ++t) {
    auto p = grouped_order(t, 32, 16, 8);
    ms.insert(p.m);
    ns.insert(p.n);
  }
  EXPECT_LE(ms.size(), 16u);
  EXPECT_LE(ns.size(), 17u);
}
