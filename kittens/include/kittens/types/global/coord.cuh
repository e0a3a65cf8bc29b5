/**
 * @file
 * @brief 4-D coordinates (batch, depth, row, col) and dimension helpers (plain C++).
 */
#pragma once

#include <cstdint>

#include "../../common/config.cuh"

namespace kittens {

/// Coordinate in a 4-D global tensor. In TMA and tile ops, r and c count whole tiles
/// (row r means element row r * tile_rows); b and d are always plain indices.
struct coord {
  int b = 0, d = 0, r = 0, c = 0;
};

/// Element coordinate of the tile at `t` for tiles of `rows` x `cols`.
KITTENS_HOST_DEVICE constexpr coord tile_to_element(coord t, int rows, int cols) {
  return {t.b, t.d, t.r * rows, t.c * cols};
}

/// Row-major linear element index of `e` in a tensor of dims (B, D, R, C).
KITTENS_HOST_DEVICE constexpr int64_t linear_index(coord e, int D, int R, int C) {
  return ((int64_t(e.b) * D + e.d) * R + e.r) * int64_t(C) + e.c;
}

} // namespace kittens
