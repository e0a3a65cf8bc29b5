/**
 * @file
 * @brief Task orders for persistent kernels (plain C++, host-tested).
 *
 * `grouped_order` walks the output in groups of `group_rows` tile rows: inside a group it
 * goes down a column of tiles before moving right, so consecutive tasks (which run at the
 * same time on neighbouring SMs) share the same B columns and a few A rows in L2.
 * `grouped_tiles` is the same order with its divisions by launch-time counts precomputed.
 *
 *     tiles (m, n), group_rows = 2, 4 x 3 tiles:
 *        n:  0  1  2
 *     m=0:   0  2  4
 *     m=1:   1  3  5
 *     m=2:   6  8 10
 *     m=3:   7  9 11
 *
 * `serpentine_task` maps a block's task_iter to a task ordinal: round r hands ordinals
 * r*G .. r*G + G-1 to the G blocks, left to right in even rounds and right to left in odd
 * ones. When tasks come longest first (a causal head's), plain round-robin gives block 0 the
 * longest task of every round and the last block the shortest, and the difference adds up
 * over the rounds; going back and forth pairs a long one with a short one.
 *
 *     G = 4 blocks:   block  0  1  2  3
 *         round 0:           0  1  2  3
 *         round 1:           7  6  5  4
 *         round 2:           8  9 10 11
 *
 * `rotated_task` hands round r's ordinals to the blocks shifted by r. When the task count of
 * the fastest index shares a factor with G (six row tasks a head on 132 blocks), round-robin
 * gives a block the same index in every round, and a block whose index is a head's short last
 * task (a partial one) runs only short tasks and idles at the end while the others set the
 * time. Shifted, every block comes to each index in turn; the tasks a round runs at once are
 * the same ones.
 *
 *     G = 4 blocks:   block  0  1  2  3
 *         round 0:           0  1  2  3
 *         round 1:           5  6  7  4
 *         round 2:          10 11  8  9 *
 * `paired_task` serves causal heads, whose tasks (count `c` a head) need work growing with
 * i (the forward's task i ends at its own last row) or shrinking with it (the backward's
 * starts at its own first row): task i and task c - 1 - i together need about the same at
 * every i. A block's tasks come in such pairs, task c - 1 - i first; pairs are numbered
 * head-major, so a head's pairs go to neighbouring blocks, which run them at the same time
 * and read the head's operands from L2 together. Round r hands pair (r / 2) * G + block to
 * each block while every block gets one; the pairs left over go one to a block, and the
 * tasks without a partner (task 0 of a head with an odd count) come last, first to the
 * blocks without a left-over pair.
 *
 *     c = 6, G = 4 blocks:   block    0       1       2       3
 *         round 0:                  (h0,5)  (h0,4)  (h0,3)  (h1,5)
 *         round 1:                  (h0,0)  (h0,1)  (h0,2)  (h1,0)
 *         round 2:                  (h1,4)  (h1,3)  ...
 */
#pragma once

#include "../common/config.cuh"
#include "../common/fast_div.cuh"

namespace kittens {

struct tile_mn {
  int m, n;
};

/// Tile of task `task` (0 <= task < m_tiles * n_tiles) in grouped order.
KITTENS_HOST_DEVICE constexpr tile_mn grouped_order(int task, int m_tiles, int n_tiles, int group_rows) {
  const int per_group = group_rows * n_tiles;
  const int group = task / per_group;
  const int first_m = group * group_rows;
  const int rows_here = (m_tiles - first_m) < group_rows ? (m_tiles - first_m) : group_rows;
  const int in_group = task % per_group;
  return {first_m + in_group % rows_here, in_group / rows_here};
}

/// `grouped_order` for tile counts fixed at launch, without division instructions: the host
/// builds it (a fast_div for the tasks of a group and one for the rows of a partial last
/// group), and the kernel maps a task with multiplies and shifts. Same tiles as
/// grouped_order(task, m_tiles, n_tiles, GroupRows), for 0 <= task < m_tiles * n_tiles <= INT_MAX.
template <int GroupRows> struct grouped_tiles {
  static_assert(GroupRows >= 1, "kittens::grouped_tiles: a group needs at least one row of tiles");
  int m_tiles = 1;
  fast_div per_group; // GroupRows * n_tiles, capped at INT_MAX (then every task is in group 0)
  fast_div last_rows; // the rows of the last group

  grouped_tiles() = default;
  /// m_tiles, n_tiles >= 1.
  KITTENS_HOST_DEVICE constexpr grouped_tiles(int m, int n)
      : m_tiles(m), per_group(capped(static_cast<long long>(GroupRows) * n)),
        last_rows(m % GroupRows == 0 ? GroupRows : m % GroupRows) {}

  KITTENS_HOST_DEVICE constexpr tile_mn tile(int task) const {
    const int group = per_group.div(task);
    const int in_group = task - group * per_group.d;
    const int first_m = group * GroupRows;
    if (m_tiles - first_m >= GroupRows) // a whole group: GroupRows is a constant
      return {first_m + in_group % GroupRows, in_group / GroupRows};
    const int n = last_rows.div(in_group);
    return {first_m + (in_group - n * last_rows.d), n};
  }

private:
  // A group of more than INT_MAX tasks holds every task (the launchers refuse more), and a
  // divisor of INT_MAX then gives the same quotient, 0, to each.
  static KITTENS_HOST_DEVICE constexpr int capped(long long d) { return d > 2147483647 ? 2147483647 : static_cast<int>(d); }
};

/// Task ordinal of a block's `task_iter`-th task, `blocks` blocks (serpentine rounds).
KITTENS_HOST_DEVICE constexpr int serpentine_task(int task_iter, int blocks, int block) {
  return task_iter * blocks + ((task_iter & 1) ? blocks - 1 - block : block);
}

/// The loop position that a block's `task_iter`-th task, of `num_iters` stages, loads at its
/// stage `iter` when the block's odd tasks walk the loop backward (tkc's `loop_order:
/// alternate`). A block's tasks of one turn run about together across the GPU, so each turn
/// begins on the slices the turn before read last, which the L2 still holds, where a forward
/// walk would ask first for those it read longest ago.
KITTENS_HOST_DEVICE constexpr int alternating_iter(int task_iter, int num_iters, int iter) {
  return (task_iter & 1) ? num_iters - 1 - iter : iter;
}

/// Task ordinal of a block's `task_iter`-th task, `blocks` blocks (rounds shifted by one block each).
KITTENS_HOST_DEVICE constexpr int rotated_task(int task_iter, int blocks, int block) {
  // (block + task_iter) % blocks, by a subtraction while task_iter < blocks (every task of a
  // launch of fewer than blocks^2 tasks); a division only past that.
  int shifted = block + task_iter;
  if (shifted >= blocks) shifted -= blocks;
  if (shifted >= blocks) shifted %= blocks;
  return task_iter * blocks + shifted;
}

/// A task of the paired order: the head (an ordinal over the other task indices) and the
/// index i (0 <= i < count) of the block's `task_iter`-th task, `blocks` blocks; false once the
/// block has none left (it has none after either). Requires heads * count <= INT_MAX (the
/// launchers refuse more tasks): the pairs are then numbered in 32 bits, where 64-bit
/// divisions were a software routine on every task boundary.
KITTENS_HOST_DEVICE constexpr bool paired_task(int task_iter, int blocks, int block, int heads, int count,
                                               int &head, int &i) {
  const int pairs_per_head = count / 2, odd = count % 2; // an odd count leaves task 0 alone
  const int pairs = heads * pairs_per_head;
  const int full_rounds = pairs / blocks; // rounds in which every block has a pair
  const int left_over = pairs - full_rounds * blocks;
  auto pair_task = [&](int pair, int member) {
    head = pair / pairs_per_head;
    const int j = pair - head * pairs_per_head;
    i = member ? j + odd : count - 1 - j; // task count - 1 - j first
  };
  int it = task_iter;
  if (it < 2 * full_rounds) {
    pair_task((it / 2) * blocks + block, it % 2);
    return true;
  }
  it -= 2 * full_rounds;
  if (block < left_over) {
    if (it < 2) {
      pair_task(full_rounds * blocks + block, it);
      return true;
    }
    it -= 2;
  }
  if (!odd) return false;
  // The lone tasks, blocks without a left-over pair first (64 bits: the ordinal may pass
  // heads by up to a round).
  const int rank = block >= left_over ? block - left_over : blocks - left_over + block;
  const long long lone = (long long)it * blocks + rank;
  if (lone >= heads) return false;
  head = static_cast<int>(lone);
  i = 0;
  return true;
}

} // namespace kittens
