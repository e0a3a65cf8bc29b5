//===- TileOrderTest.cpp - persistent task orders -----------------------===//
#include <kittens/lcf/tile_order.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

using kittens::alternating_iter;
using kittens::grouped_order;
using kittens::paired_task;
using kittens::rotated_task;
using kittens::serpentine_task;

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

// grouped_order in 64 bits (the oracle for counts whose group would overflow int).
static kittens::tile_mn groupedOrder64(long long task, long long m, long long n, long long g) {
  const long long group = task / (g * n), first_m = group * g;
  const long long rows = std::min(m - first_m, g), in_group = task % (g * n);
  return {static_cast<int>(first_m + in_group % rows), static_cast<int>(in_group / rows)};
}

template <int G> void expectGroupedTilesAgree(int m, int n) {
  const kittens::grouped_tiles<G> order(m, n);
  for (int t = 0; t < m * n; ++t) {
    const auto want = grouped_order(t, m, n, G), got = order.tile(t);
    ASSERT_EQ(got.m, want.m) << m << "x" << n << " G" << G << " task " << t;
    ASSERT_EQ(got.n, want.n) << m << "x" << n << " G" << G << " task " << t;
  }
}

TEST(TileOrder, GroupedTilesAgreeWithGroupedOrder) {
  // Every task of every grid up to 40 x 40, whole and partial last groups.
  for (int m = 1; m <= 40; ++m)
    for (int n = 1; n <= 40; ++n) {
      expectGroupedTilesAgree<1>(m, n);
      expectGroupedTilesAgree<3>(m, n);
      expectGroupedTilesAgree<8>(m, n);
    }
  // The anchor GEMMs' grids (128 x 256 tiles) and a ragged one, every task.
  for (auto [m, n] : {std::pair{16, 8}, {32, 16}, {64, 32}, {32, 56}, {128, 16}, {64, 112}, {37, 29}})
    expectGroupedTilesAgree<8>(m, n);
}

TEST(TileOrder, GroupedTilesAgreeAtTheLargestCounts) {
  // Pseudo-random tasks and the last ones of grids up to INT_MAX tasks, including those whose
  // group of 8 rows holds more than INT_MAX tasks (its divisor is capped).
  const std::pair<int, int> grids[] = {{46340, 46340}, {8, 268435455}, {1, 2147483647}, {7, 306783378},
                                       {2147483647, 1}, {65537, 32767}, {9, 238609294}};
  for (auto [m, n] : grids) {
    const kittens::grouped_tiles<8> order(m, n);
    const long long total = static_cast<long long>(m) * n;
    unsigned long long x = 88172645463325252ull;
    for (int i = 0; i < 20000; ++i) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      const long long t = i < 64 ? total - 1 - i : static_cast<long long>(x % static_cast<unsigned long long>(total));
      if (t < 0) continue;
      const auto want = groupedOrder64(t, m, n, 8), got = order.tile(static_cast<int>(t));
      ASSERT_EQ(got.m, want.m) << m << "x" << n << " task " << t;
      ASSERT_EQ(got.n, want.n) << m << "x" << n << " task " << t;
    }
  }
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

// Both round orders hand each round's ordinals to the blocks, each once, and a block that
// misses the end has no later task either (the LCF loop stops at its first miss).
template <class Order> void expectEveryOrdinalOnce(Order order) {
  for (int blocks : {1, 2, 7, 132})
    for (int total : {1, 5, 131, 132, 133, 1376}) {
      std::set<int> seen;
      for (int b = 0; b < blocks; ++b)
        for (int it = 0;; ++it) {
          const int t = order(it, blocks, b);
          ASSERT_GE(t, it * blocks);
          ASSERT_LT(t, (it + 1) * blocks);
          if (t >= total) {
            ASSERT_GE(order(it + 1, blocks, b), total);
            break;
          }
          ASSERT_TRUE(seen.insert(t).second) << blocks << " blocks, task " << t;
        }
      EXPECT_EQ(seen.size(), static_cast<size_t>(total)) << blocks << " blocks, " << total;
    }
}

TEST(TileOrder, SerpentineHandsOutEveryOrdinalOnce) { expectEveryOrdinalOnce(serpentine_task); }

TEST(TileOrder, RotatedHandsOutEveryOrdinalOnce) { expectEveryOrdinalOnce(rotated_task); }

TEST(TileOrder, AlternatingWalksEvenTasksForwardAndOddTasksBackward) {
  for (int n : {1, 2, 3, 64, 65})
    for (int task_iter : {0, 1, 2, 3, 1000, 1001}) {
      std::set<int> seen;
      for (int it = 0; it < n; ++it) {
        const int k = alternating_iter(task_iter, n, it);
        ASSERT_GE(k, 0); ASSERT_LT(k, n);
        ASSERT_TRUE(seen.insert(k).second) << "task " << task_iter << " of " << n << " stages";
        EXPECT_EQ(k, task_iter % 2 == 0 ? it : n - 1 - it);
      }
    }
  // A turn begins where the block's turn before ended.
  EXPECT_EQ(alternating_iter(1, 64, 0), alternating_iter(0, 64, 63));
  EXPECT_EQ(alternating_iter(2, 64, 0), alternating_iter(1, 64, 63));
}

TEST(TileOrder, RotatedShiftsEachRoundByOneBlockPastTheFirstBlocksRounds) {
  // Subtraction while task_iter < blocks, a division after: the same shift either way.
  for (int blocks : {1, 2, 7, 132})
    for (int b = 0; b < blocks; ++b)
      for (int it = 0; it < 3 * blocks + 2; ++it)
        ASSERT_EQ(rotated_task(it, blocks, b), it * blocks + (b + it) % blocks) << blocks << " " << b << " " << it;
}

TEST(TileOrder, RotatedSpreadsAShortLastTask) {
  // 512 heads of six tasks whose last is a third as long (N = 1024 in 192-row tasks: five
  // of 3 row blocks, one of 1) on 132 blocks. Round-robin gives blocks 5, 11, ... only the
  // short task (132 = 22 x 6): they end at a third of the others' time, and the busiest block
  // carries 24 full tasks. Shifted rounds give every block each index in turn.
  const int blocks = 132, total = 512 * 6;
  auto length = [](int t) { return t % 6 == 5 ? 1 : 3; };
  long long sum = 0, most = 0, least = 1 << 30, most_rr = 0, least_rr = 1 << 30;
  for (int t = 0; t < total; ++t) sum += length(t);
  for (int b = 0; b < blocks; ++b) {
    long long mine = 0, rr = 0;
    for (int it = 0; rotated_task(it, blocks, b) < total; ++it) mine += length(rotated_task(it, blocks, b));
    for (int t = b; t < total; t += blocks) rr += length(t);
    most = std::max(most, mine), least = std::min(least, mine);
    most_rr = std::max(most_rr, rr), least_rr = std::min(least_rr, rr);
  }
  const double mean = static_cast<double>(sum) / blocks;
  // Round-robin: 72 (24 full tasks) and 23 (short ones only) about a mean of 62.1; shifted:
  // 64 and 61, within one task of the mean as whole tasks allow.
  EXPECT_LE(most, mean + 3);
  EXPECT_GE(least, mean - 3);
  EXPECT_GT(most_rr, mean * 1.15);
  EXPECT_LT(least_rr, mean * 0.4);
}

TEST(TileOrder, SerpentineBalancesTasksThatComeLongestFirst) {
  // 1376 tasks whose lengths fall by one every 16 (a causal order, longest first) on 132
  // blocks: the busiest block's sum stays within 1 % of the mean (456 against 453.5);
  // round-robin gives block 0 the longest task of every round (496, 9 % over).
  const int blocks = 132, total = 1376;
  auto length = [&](int t) { return 86 - t / 16; };
  long long sum = 0, most = 0, most_rr = 0;
  for (int t = 0; t < total; ++t) sum += length(t);
  for (int b = 0; b < blocks; ++b) {
    long long mine = 0, rr = 0;
    for (int it = 0; serpentine_task(it, blocks, b) < total; ++it) mine += length(serpentine_task(it, blocks, b));
    for (int t = b; t < total; t += blocks) rr += length(t);
    most = mine > most ? mine : most;
    most_rr = rr > most_rr ? rr : most_rr;
  }
  const double mean = static_cast<double>(sum) / blocks;
  EXPECT_LE(most, mean * 1.01);
  EXPECT_GT(most_rr, mean * 1.05);
}

TEST(TileOrder, PairedHandsOutEveryTaskOnce) {
  for (int blocks : {1, 2, 7, 132})
    for (int heads : {1, 2, 5, 64, 131, 256, 512})
      for (int count : {1, 2, 3, 6, 11, 16, 22, 33}) {
        std::set<std::pair<int, int>> seen;
        for (int b = 0; b < blocks; ++b)
          for (int it = 0;; ++it) {
            int head = -1, i = -1;
            if (!paired_task(it, blocks, b, heads, count, head, i)) {
              // The LCF loop stops at a block's first miss: nothing may come after it.
              for (int later = it + 1; later < it + 2 * count + 4; ++later)
                ASSERT_FALSE(paired_task(later, blocks, b, heads, count, head, i));
              break;
            }
            ASSERT_GE(head, 0); ASSERT_LT(head, heads); ASSERT_GE(i, 0); ASSERT_LT(i, count);
            ASSERT_TRUE(seen.insert({head, i}).second)
                << blocks << " blocks, " << heads << " heads, " << count << ": " << head << "," << i;
          }
        EXPECT_EQ(seen.size(), static_cast<size_t>(heads) * count) << blocks << " blocks, " << heads
                                                                    << " heads, count " << count;
      }
}

// The paired order as first written, in 64 bits: the 32-bit one must agree with it wherever
// heads * count fits in an int, up to the largest such.
static bool paired_task_64(int task_iter, int blocks, int block, int heads, int count, int &head, int &i) {
  const int pairs_per_head = count / 2, odd = count % 2;
  const long long pairs = (long long)heads * pairs_per_head;
  const int full_rounds = static_cast<int>(pairs / blocks);
  const int left_over = static_cast<int>(pairs - (long long)full_rounds * blocks);
  auto pair_task = [&](long long pair, int member) {
    head = static_cast<int>(pair / pairs_per_head);
    const int j = static_cast<int>(pair % pairs_per_head);
    i = member ? j + odd : count - 1 - j;
  };
  int it = task_iter;
  if (it < 2 * full_rounds) {
    pair_task((long long)(it / 2) * blocks + block, it % 2);
    return true;
  }
  it -= 2 * full_rounds;
  if (block < left_over) {
    if (it < 2) {
      pair_task((long long)full_rounds * blocks + block, it);
      return true;
    }
    it -= 2;
  }
  if (!odd) return false;
  const int rank = block >= left_over ? block - left_over : blocks - left_over + block;
  const long long lone = (long long)it * blocks + rank;
  if (lone >= heads) return false;
  head = static_cast<int>(lone);
  i = 0;
  return true;
}

TEST(TileOrder, PairedIn32BitsAgreesUpToTheLargestTaskCount) {
  const int max_int = 2147483647;
  for (int count : {1, 2, 3, 11, 16})
    for (int heads : {1, 5, 512, max_int / count - 131, max_int / count})
      for (int blocks : {1, 7, 132}) {
        // The first rounds, the rounds around the left-over pairs and the lone tasks.
        // (64-bit task_iter arithmetic here: 2 * rounds + 10 passes INT_MAX with one block.)
        const long long pairs = (long long)heads * (count / 2);
        const long long rounds = pairs / blocks;
        for (long long base : {0LL, 2 * rounds - 4, 2 * rounds, 2 * rounds + 2})
          for (long long it64 = base < 0 ? 0 : base; it64 < (base < 0 ? 0 : base) + 8 && it64 <= max_int; ++it64)
            for (int b : {0, blocks / 2, blocks - 1}) {
              const int it = static_cast<int>(it64);
              int h32 = -1, i32 = -1, h64 = -1, i64 = -1;
              const bool got = paired_task(it, blocks, b, heads, count, h32, i32);
              ASSERT_EQ(got, paired_task_64(it, blocks, b, heads, count, h64, i64))
                  << count << " " << heads << " " << blocks << " " << it << " " << b;
              if (got) {
                EXPECT_EQ(h32, h64);
                EXPECT_EQ(i32, i64);
              }
            }
      }
}

TEST(TileOrder, PairedRunsAHeadsPairsTogetherLongFirst) {
  // Six tasks a head, 132 blocks: round 0 gives blocks 0-2 head 0's tasks 5, 4, 3 and round 1
  // their partners 0, 1, 2, so every block's two tasks add up to the same (5 + 0 = 4 + 1).
  for (int b = 0; b < 3; ++b) {
    int head = -1, i = -1;
    ASSERT_TRUE(paired_task(0, 132, b, 512, 6, head, i));
    EXPECT_EQ(head, 0); EXPECT_EQ(i, 5 - b);
    ASSERT_TRUE(paired_task(1, 132, b, 512, 6, head, i));
    EXPECT_EQ(head, 0); EXPECT_EQ(i, b);
  }
  int head = -1, i = -1;
  ASSERT_TRUE(paired_task(0, 132, 3, 512, 6, head, i));
  EXPECT_EQ(head, 1); EXPECT_EQ(i, 5);
  // An odd count pairs 10 with 1, ..., 6 with 5 and leaves task 0 for the end.
  ASSERT_TRUE(paired_task(1, 132, 0, 256, 11, head, i));
  EXPECT_EQ(head, 0); EXPECT_EQ(i, 1);
  ASSERT_TRUE(paired_task(1, 132, 4, 256, 11, head, i));
  EXPECT_EQ(head, 0); EXPECT_EQ(i, 5);
}

TEST(TileOrder, PairedBalancesCausalHeads) {
  // Causal heads in end-aligned 192-row tasks over 128-key stages (N = 1024: six tasks of
  // 1, 2, 4, 5, 7, 8 stages; N = 2048: eleven of 1 ... 16), each costing one more for its
  // setup and finish, on 132 blocks: each pair adds up to within a stage of the head's longest
  // task with its partner, and the busiest block's sum stays within a pair's length of the
  // mean (whole pairs: 1536 pairs on 132 blocks make 11 or 12 a block).
  const int blocks = 132;
  for (int n : {1024, 2048}) {
    const int rows = (n + 63) / 64, count = (rows + 2) / 3, lead = count * 3 - rows;
    const int heads = 16384 / n * 32;
    auto length = [&](int i) {
      const int end = std::min((i + 1) * 192 - lead * 64, n);
      return (end + 127) / 128 + 1;
    };
    long long sum = 0, most = 0;
    for (int i = 0; i < count; ++i) sum += (long long)heads * length(i);
    const int pair = length(count - 1) + length(count % 2);
    for (int b = 0; b < blocks; ++b) {
      long long mine = 0;
      int head = 0, i = 0, first = 0;
      for (int it = 0; paired_task(it, blocks, b, heads, count, head, i); ++it) {
        mine += length(i);
        if (it % 2 == 0)
          first = i;
        else if (first != 0) // a pair (task 0 of an odd count comes alone)
          EXPECT_LE(std::abs(length(first) + length(i) - pair), 1) << n << ": " << first << "+" << i;
      }
      most = std::max(most, mine);
    }
    const double mean = static_cast<double>(sum) / blocks;
    EXPECT_LE(most, mean + pair) << n;
  }
}

TEST(TileOrder, PairedBalancesTheCausalBackward) {
  // The causal backward at D = 128: a task of 128 keys starts at its first key's 64-query
  // tile, so task i of a head runs N / 64 - 2 i stages (plus one for its setup and finish).
  // At 16 and 32 tasks a head (N = 2048, 4096; 16384 tokens, 16 heads of each sequence) on
  // 132 blocks, pairs keep the busiest block within a pair's length of the mean, where the
  // rotated order (which tkc keeps below 16 tasks a head) leaves it over 10 % above.
  const int blocks = 132;
  for (int n : {2048, 4096}) {
    const int count = n / 128, heads = 16384 / n * 16;
    auto length = [&](int i) { return n / 64 - 2 * i + 1; };
    long long sum = 0, most = 0, most_rotated = 0;
    for (int i = 0; i < count; ++i) sum += (long long)heads * length(i);
    const int pair = length(0) + length(count - 1);
    for (int b = 0; b < blocks; ++b) {
      long long mine = 0, rotated = 0;
      int head = 0, i = 0;
      for (int it = 0; paired_task(it, blocks, b, heads, count, head, i); ++it) mine += length(i);
      for (int it = 0; rotated_task(it, blocks, b) < heads * count; ++it)
        rotated += length(rotated_task(it, blocks, b) % count);
      most = std::max(most, mine);
      most_rotated = std::max(most_rotated, rotated);
    }
    const double mean = static_cast<double>(sum) / blocks;
    EXPECT_LE(most, mean + pair) << n;
    EXPECT_GT(most_rotated, mean * 1.10) << n;
  }
}
