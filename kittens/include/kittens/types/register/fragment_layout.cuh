/**
 * @file
 * @brief Which tile element each lane holds in a 16x16 register fragment (plain C++).
 *
 * Lane l has group g = l / 4 and quad position q = l % 4. A fragment holds four packed
 * pairs `data[0..3]`, each pair two elements `.x`/`.y`.
 *
 * Row layout (mma A/C operand, wgmma accumulator and register-A operand):
 *
 *        cols 0..7                 cols 8..15
 *   rows 0..7   data[0] (g, 2q|2q+1)   data[2] (g, 8+2q|9+2q)
 *   rows 8..15  data[1] (g+8, 2q|2q+1) data[3] (g+8, 8+2q|9+2q)
 *
 * Column layout (mma B operand): the same picture transposed, pairs run down a column.
 *
 *   data[0] (rows 2q|2q+1, col g)     data[1] (rows 2q|2q+1, col g+8)
 *   data[2] (rows 8+2q|9+2q, col g)   data[3] (rows 8+2q|9+2q, col g+8)
 */
#pragma once

#include "../../common/config.cuh"

namespace kittens::fragment {

/// (row, col) inside a 16x16 fragment.
struct rc {
  int row, col;
};

/// Element held by `lane` in pair `reg` (0..3), component `half` (0 = .x, 1 = .y), row layout.
KITTENS_HOST_DEVICE constexpr rc row_layout(int lane, int reg, int half) {
  return {(lane / 4) + 8 * (reg & 1), 2 * (lane % 4) + 8 * (reg >> 1) + half};
}
/// Same for the column layout.
KITTENS_HOST_DEVICE constexpr rc col_layout(int lane, int reg, int half) {
  return {2 * (lane % 4) + 8 * (reg >> 1) + half, (lane / 4) + 8 * (reg & 1)};
}

/// Which 8-column block of a row-layout fragment `lane` stores in access `access` (0 or 1)
/// of a row half into a 64-byte-swizzled float tile: there a fragment's 16 columns are one
/// 64-byte line, two lines a bank row, and the unit XOR moves a block by the row's bit 1. A
/// half-warp's groups 2 and 3 take the blocks in the other order, so that each access of a
/// half-warp covers the 32 banks once (the attention backward's dQ staging).
KITTENS_HOST_DEVICE constexpr int swizzle64_block(int lane, int access) {
  return access ^ ((lane >> 3) & 1);
}

} // namespace kittens::fragment
