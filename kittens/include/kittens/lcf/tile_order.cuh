/**
 * @file
 * @brief Task -> output-tile orders for persistent kernels (plain C++, host-tested).
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

} // namespace kittens
