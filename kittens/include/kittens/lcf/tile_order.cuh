/**
 * @file
 * @brief Task orders for persistent kernels (plain C++, host-tested).
 *
 * `grouped_order` walks the output in groups of `group_rows` tile rows: inside a group it
 * goes down a column of tiles before moving right, so consecutive tasks (which run at the
 * same time on neighbouring SMs) share the same B columns and a few A rows in L2.
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
 * `balanced_task` is `serpentine_task` but for the launch's last ROUNDS rounds, whose
 * ordinals go to the blocks in order of the work each has had so far, least first (ordinals
 * come longest first, so a round's longest task goes to the block with the least work). Whole
 * tasks leave blocks 23 or 24 of them whatever they cost; ranked, the last rounds even out
 * what the earlier ones left. The ranks come from `rank_last_rounds` on the host, from a
 * modelled weight per ordinal, and travel in the kernel's arguments (`round_ranks`, by value:
 * no memory a concurrent launch could share). Any ranks are a permutation of the round, so
 * the weights decide speed, never which tasks run.
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
 *         round 2:          10 11  8  9
 */
#pragma once

#include "../common/config.cuh"

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

/// Task ordinal of a block's `task_iter`-th task, `blocks` blocks (serpentine rounds).
KITTENS_HOST_DEVICE constexpr int serpentine_task(int task_iter, int blocks, int block) {
  return task_iter * blocks + ((task_iter & 1) ? blocks - 1 - block : block);
}

/// Each block's place in the order of the launch's last rounds (see balanced_task).
struct round_ranks {
  static constexpr int ROUNDS = 16, BLOCKS = 160;
  int first_round; ///< the first ranked round; -1: none (serpentine throughout)
  unsigned char rank[ROUNDS][BLOCKS];
};

/// Task ordinal of a block's `task_iter`-th task, `blocks` blocks: serpentine rounds, the
/// last ones in the order of `ranks`.
KITTENS_HOST_DEVICE constexpr int balanced_task(int task_iter, int blocks, int block, const round_ranks &ranks) {
  const int k = task_iter - ranks.first_round;
  if (ranks.first_round < 0 || k < 0 || k >= round_ranks::ROUNDS) return serpentine_task(task_iter, blocks, block);
  return task_iter * blocks + ranks.rank[k][block];
}

/// Host: the ranks for `total` tasks on `blocks` blocks, `weight(t)` the modelled cost of
/// ordinal t (ordinals longest first). None (serpentine throughout) for more blocks than
/// round_ranks holds, or more than MAX_ROUNDS rounds: there the ragged end is a small share
/// of every block's work, and the weights of all earlier tasks would cost the host too much.
template <class Weight> inline void rank_last_rounds(round_ranks &ranks, long long total, int blocks, Weight weight) {
  constexpr long long MAX_ROUNDS = 64;
  ranks.first_round = -1;
  if (blocks < 1 || blocks > round_ranks::BLOCKS || total < 1) return;
  const long long rounds = (total + blocks - 1) / blocks;
  if (rounds > MAX_ROUNDS) return;
  const int first = static_cast<int>(rounds > round_ranks::ROUNDS ? rounds - round_ranks::ROUNDS : 0);
  // Rounds past the last (a block asks for one after its last task) keep the plain order.
  for (int k = 0; k < round_ranks::ROUNDS; ++k)
    for (int b = 0; b < blocks; ++b) ranks.rank[k][b] = static_cast<unsigned char>(b);
  long long load[round_ranks::BLOCKS] = {};
  for (int it = 0; it < first; ++it)
    for (int b = 0; b < blocks; ++b) load[b] += weight(serpentine_task(it, blocks, b));
  int order[round_ranks::BLOCKS];
  for (int b = 0; b < blocks; ++b) order[b] = b;
  auto before = [&](int a, int b) { return load[a] < load[b] || (load[a] == load[b] && a < b); };
  for (int it = first; it < rounds; ++it) {
    // Least work first, among equals the lower block: an insertion sort of last round's
    // order, which one task a block has changed little.
    for (int i = 1; i < blocks; ++i)
      for (int j = i; j > 0 && before(order[j], order[j - 1]); --j) {
        const int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
    for (int place = 0; place < blocks; ++place) {
      const int b = order[place];
      ranks.rank[it - first][b] = static_cast<unsigned char>(place);
      const long long t = static_cast<long long>(it) * blocks + place;
      if (t < total) load[b] += weight(static_cast<int>(t));
    }
  }
  ranks.first_round = first;
}

/// Task ordinal of a block's `task_iter`-th task, `blocks` blocks (rounds shifted by one block each).
KITTENS_HOST_DEVICE constexpr int rotated_task(int task_iter, int blocks, int block) {
  return task_iter * blocks + (block + task_iter) % blocks;
}

} // namespace kittens
