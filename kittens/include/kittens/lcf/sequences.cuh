/**
 * @file
 * @brief Tiles of sequences packed end to end (variable-length batches), numbered together.
 *
 * A dimension of `total` elements holds sequences end to end, split at `count` offsets
 * (offsets[0] = 0, nondecreasing, offsets[count - 1] = total): sequence s is the elements
 * [offsets[s], offsets[s + 1]). Its tiles of `step` elements are numbered from
 *
 *     first_tile(s) = offsets[s] / step + s
 *
 * on. From one sequence to the next that number grows by floor(offsets[s + 1] / step) -
 * floor(offsets[s] / step) + 1, at least the ceil(length / step) tiles of the first, so no two
 * sequences share a number; and the last tile's number lies below total / step + count - 1.
 * A grid of that many tasks therefore covers every tile of every sequence without the host
 * reading the offsets, and only the numbers between two sequences' tiles (at most one a
 * sequence) name no tile.
 *
 *     step 4, offsets {0, 6, 7, 16}:   sequence  0      1   2
 *                                      elements  0..5   6   7..15
 *                                      tiles     0, 1   2   3, 4, 5   (6 names no tile)
 *
 * `locate_tile` is the plain C++ statement of the lookup (host-tested); `find_sequence` is
 * the same on the device, one warp reading 32 offsets at a time.
 */
#pragma once

#include "../common/config.cuh"

namespace kittens {

/// Where tile number `u` lies: its sequence's first element and length, and its tile index
/// in that sequence (at or past the sequence's end: the number names no tile).
struct sequence_tile {
  int start = 0;
  int length = 0;
  int tile = 0;
};

namespace detail {
KITTENS_HOST_DEVICE constexpr int clamp_offset(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }
} // namespace detail

/// Tile number `u` of the sequences split at `offsets` (see the file comment). Offsets out of
/// [0, total] or out of order are clamped, so that every element named lies in [0, total).
KITTENS_HOST_DEVICE constexpr sequence_tile locate_tile(const int *offsets, int count, int total, int step, int u) {
  // The last sequence whose first tile number is at most u: those that are form a prefix.
  int s = -1;
  for (int x = 0; x + 1 < count; ++x)
    if (detail::clamp_offset(offsets[x], 0, total) / step + x <= u) s = x;
  if (s < 0) return {0, 0, u};
  const int start = detail::clamp_offset(offsets[s], 0, total);
  const int end = detail::clamp_offset(offsets[s + 1], start, total);
  return {start, end - start, u - (start / step + s)};
}

#if defined(__CUDACC__)
/// locate_tile on the device: every lane of the calling warp takes part (all 32 must call it,
/// with the same arguments) and gets the same answer. One pass reads 32 offsets; a pass
/// whose 32 sequences all start at or before `u` is followed by the next.
KITTENS_DEVICE sequence_tile find_sequence(const int *offsets, int count, int total, int step, int u) {
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x % 32;
  int s = -1, start = 0, end = 0;
  for (int base = 0; base + 1 < count; base += 32) {
    const int x = base + lane;
    int first = 0, next = 0;
    bool below = false;
    if (x + 1 < count) {
      first = detail::clamp_offset(offsets[x], 0, total);
      next = offsets[x + 1];
      below = first / step + x <= u;
    }
    const unsigned found = __ballot_sync(all, below);
    if (found) {
      const int last = 31 - __clz(found);
      s = base + last;
      start = __shfl_sync(all, first, last);
      end = __shfl_sync(all, next, last);
    }
    if (found != all) break;
  }
  if (s < 0) return {0, 0, u};
  end = detail::clamp_offset(end, start, total);
  return {start, end - start, u - (start / step + s)};
}
#endif

} // namespace kittens
