/**
 * @file
 * @brief Shared-tile layout arithmetic: swizzle width choice, chunk order and the XOR swizzle.
 *
 * Plain C++ (compiles with g++): the host unit tests check it directly, and the device
 * tile types call the same functions, so host tests pin what the GPU code does.
 *
 * A shared tile of R rows x C columns with swizzle width S bytes is stored as column
 * chunks of S/sizeof(T) elements. Chunks are outermost; inside a chunk each row is exactly
 * S bytes and rows follow each other. The byte offset of element (r, c) before swizzling is
 *
 *     chunk(c) * (R * S) + r * S + (c % chunk_cols) * sizeof(T)
 *
 * and the swizzle XORs the 16-byte-unit bits [4, 4+log2(S/16)) with the row bits above
 * bit 7, inside each repeat of 8 * S bytes (what TMA's SWIZZLE_{32,64,128}B and wgmma
 * expect when the tile base is 1024-byte aligned). S == 0 means plain row-major.
 */
#pragma once

#include <cstdint>

#include "config.cuh"

namespace kittens::layout {

/// Widest legal swizzle (128, 64 or 32 bytes) whose chunk divides `cols`; 0 if none fits.
KITTENS_HOST_DEVICE constexpr int default_swizzle_bytes(int elem_bytes, int cols) {
  for (int s = 128; s >= 32; s /= 2)
    if (cols % (s / elem_bytes) == 0) return s;
  return 0;
}

/// True for the swizzle widths the hardware implements (0 = none).
KITTENS_HOST_DEVICE constexpr bool valid_swizzle_bytes(int s) { return s == 0 || s == 32 || s == 64 || s == 128; }

/// Elements per column chunk (the whole row when unswizzled).
KITTENS_HOST_DEVICE constexpr int chunk_cols(int elem_bytes, int swizzle_bytes, int cols) {
  return swizzle_bytes == 0 ? cols : swizzle_bytes / elem_bytes;
}

/// Apply the hardware XOR swizzle to a byte offset measured from a 1024-byte-aligned base.
KITTENS_HOST_DEVICE constexpr uint32_t swizzle(uint32_t byte_offset, int swizzle_bytes) {
  if (swizzle_bytes == 0) return byte_offset;
  const uint32_t repeat = static_cast<uint32_t>(swizzle_bytes) * 8u;
  return byte_offset ^ (((byte_offset % repeat) >> 7) << 4);
}

/// Unswizzled byte offset of element (r, c) in a rows x cols tile.
KITTENS_HOST_DEVICE constexpr uint32_t linear_offset(int r, int c, int rows, int cols, int elem_bytes,
                                                     int swizzle_bytes) {
  if (swizzle_bytes == 0) return static_cast<uint32_t>((r * cols + c) * elem_bytes);
  const int cc = swizzle_bytes / elem_bytes;
  return static_cast<uint32_t>((c / cc) * rows * swizzle_bytes + r * swizzle_bytes + (c % cc) * elem_bytes);
}

/// Final (swizzled) byte offset of element (r, c); the tile base must be 1024-byte aligned.
KITTENS_HOST_DEVICE constexpr uint32_t tile_offset(int r, int c, int rows, int cols, int elem_bytes,
                                                   int swizzle_bytes) {
  return swizzle(linear_offset(r, c, rows, cols, elem_bytes, swizzle_bytes), swizzle_bytes);
}

} // namespace kittens::layout
