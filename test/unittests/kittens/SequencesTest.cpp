//===- SequencesTest.cpp - tiles of packed sequences, numbered together ---===//
#include <kittens/lcf/sequences.cuh>

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

using kittens::locate_tile;
using kittens::sequence_tile;

TEST(Sequences, TheFileCommentsExample) {
  const int offsets[] = {0, 6, 7, 16};
  auto at = [&](int u) { return locate_tile(offsets, 4, 16, 4, u); };
  EXPECT_EQ(at(0).start, 0); EXPECT_EQ(at(0).length, 6); EXPECT_EQ(at(0).tile, 0);
  EXPECT_EQ(at(1).tile, 1);
  EXPECT_EQ(at(2).start, 6); EXPECT_EQ(at(2).length, 1); EXPECT_EQ(at(2).tile, 0);
  EXPECT_EQ(at(3).start, 7); EXPECT_EQ(at(3).length, 9); EXPECT_EQ(at(3).tile, 0);
  EXPECT_EQ(at(5).tile, 2);
  EXPECT_EQ(at(6).start, 7); EXPECT_EQ(at(6).tile, 3); // past sequence 2's end: no tile
}

// Every tile of every sequence has exactly one number below total / step + count - 1, and
// every number names a tile or lies past one sequence's end (at most one such a sequence).
TEST(Sequences, EveryTileOnceUnderTheBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int step = std::vector<int>{1, 3, 64, 128, 192}[trial % 5];
    const int sequences = 1 + static_cast<int>(rng() % 40);
    std::vector<int> offsets{0};
    for (int s = 0; s < sequences; ++s)
      offsets.push_back(offsets.back() + static_cast<int>(rng() % (trial % 3 == 0 ? 5 : 700)));
    const int total = offsets.back(), count = static_cast<int>(offsets.size());
    const int numbers = total / step + count - 1;
    std::set<std::pair<int, int>> seen; // (start, tile)
    std::vector<int> gaps(count, 0);
    for (int u = 0; u < numbers; ++u) {
      const sequence_tile t = locate_tile(offsets.data(), count, total, step, u);
      ASSERT_GE(t.tile, 0);
      if (static_cast<long long>(t.tile) * step >= t.length)
        continue; // names no tile
      ASSERT_TRUE(seen.insert({t.start, t.tile}).second) << "tile numbered twice";
    }
    size_t tiles = 0;
    for (int s = 0; s + 1 < count; ++s)
      tiles += (offsets[s + 1] - offsets[s] + step - 1) / step;
    EXPECT_EQ(seen.size(), tiles) << "trial " << trial;
  }
}

TEST(Sequences, BadOffsetsStayInBounds) {
  const int offsets[] = {-5, 40, 10, 999};
  for (int u = 0; u < 12; ++u) {
    const sequence_tile t = locate_tile(offsets, 4, 20, 4, u);
    EXPECT_GE(t.start, 0);
    EXPECT_GE(t.length, 0);
    EXPECT_LE(t.start + t.length, 20);
  }
  const sequence_tile none = locate_tile(offsets, 1, 20, 4, 0); // no sequence at all
  EXPECT_EQ(none.length, 0);
}
