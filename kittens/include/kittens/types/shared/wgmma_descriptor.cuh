/**
 * @file
 * @brief wgmma shared-memory matrix descriptor fields (plain C++, host-testable).
 *
 * 64-bit descriptor:
 *
 *   bits  0..13  start address >> 4      bits 32..45  stride byte offset (SBO) >> 4
 *   bits 16..29  leading byte offset (LBO) >> 4   bits 49..51 base offset (0: bases 1024-aligned)
 *   bits 62..63  swizzle: 0 none, 1 = 128 B, 2 = 64 B, 3 = 32 B
 *
 * For our column-chunk tiles (see common/swizzle.cuh) with swizzle S bytes:
 *  - K-major operand (rows = M or N, cols = K): SBO = 8 * S (next group of 8 rows); LBO is
 *    unused because one k16 step (32 bytes) never leaves a chunk. Step k starts at
 *    (32k / S) * chunk_stride + (32k % S) bytes.
 *  - MN-major operand (rows = K, cols = M or N): SBO = 8 * S (next 8 rows of K), LBO =
 *    chunk_stride (next chunk of S / sizeof(T) columns of M or N). Step k starts 16 rows
 *    further: 16 * S * k bytes.
 */
#pragma once

#include <cstdint>

#include "../../common/config.cuh"

namespace kittens::wgmma_desc {

enum class major { k, mn };

/// Swizzle-mode field value for a swizzle width in bytes (0 = none).
KITTENS_HOST_DEVICE constexpr uint64_t swizzle_code(int swizzle_bytes) {
  return swizzle_bytes == 128 ? 1 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 32 ? 3 : 0;
}

/// Pack the descriptor fields.
KITTENS_HOST_DEVICE constexpr uint64_t encode(uint32_t start_byte_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                              int swizzle_bytes) {
  return (uint64_t((start_byte_addr >> 4) & 0x3FFF)) | (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) | (swizzle_code(swizzle_bytes) << 62);
}

/// The descriptor `desc` with its start address moved `offset_bytes` (a multiple of 16) further.
/// The field holds address >> 4 in 14 bits and shared addresses stay below 256 KiB, so the add
/// cannot carry into the next field.
KITTENS_HOST_DEVICE constexpr uint64_t advance(uint64_t desc, uint32_t offset_bytes) { return desc + (offset_bytes >> 4); }

/// Start offset (bytes from the operand's first element), LBO and SBO for one k16 step.
struct fields {
  uint32_t offset, lbo, sbo;
};

/// Fields for k-step `k` of an operand stored with swizzle `s`, chunks `chunk_stride` bytes apart.
KITTENS_HOST_DEVICE constexpr fields step_fields(major m, int k, int swizzle_bytes, int chunk_stride) {
  if (m == major::k) {
    const int kb = 32 * k;
    return {uint32_t((kb / swizzle_bytes) * chunk_stride + kb % swizzle_bytes), 16u, uint32_t(8 * swizzle_bytes)};
  }
  return {uint32_t(16 * swizzle_bytes * k), uint32_t(chunk_stride), uint32_t(8 * swizzle_bytes)};
}

} // namespace kittens::wgmma_desc
