/**
 * @file
 * @brief Thread-index helpers, shared-memory address conversion and host error checks.
 */
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "config.cuh"

namespace kittens {

/// Lane of the calling thread within its warp (0..31).
KITTENS_DEVICE int laneid() { return threadIdx.x & 31; }
/// Warp of the calling thread within its block.
KITTENS_DEVICE int warpid() { return threadIdx.x >> 5; }
/// Warpgroup (4 consecutive warps) of the calling thread within its block. Read from lane 0
/// so the compiler knows the value is the same across the warp: addresses built from it (a
/// warpgroup's own tile) stay in uniform registers, as wgmma descriptors must be. Call it
/// from all 32 lanes of the warp.
KITTENS_DEVICE int warpgroupid() { return __shfl_sync(0xffffffffu, threadIdx.x >> 7, 0); }

namespace warpgroup {
/// Warp index within the calling thread's warpgroup (0..3).
KITTENS_DEVICE int warpid() { return (threadIdx.x >> 5) & 3; }
/// Thread index within the calling thread's warpgroup (0..127).
KITTENS_DEVICE int laneid() { return threadIdx.x & 127; }
} // namespace warpgroup

/// 32-bit shared-window address of a generic pointer into shared memory (what PTX `.shared` takes).
KITTENS_DEVICE uint32_t smem_addr(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

/// Round x up to a multiple of a (a > 0).
KITTENS_HOST_DEVICE constexpr int round_up(int x, int a) { return (x + a - 1) / a * a; }

/// Host check for CUDA runtime calls: prints the failing call with file:line and exits.
#define KITTENS_CUDA_CHECK(call)                                                                 \
  do {                                                                                           \
    cudaError_t kittens_err_ = (call);                                                           \
    if (kittens_err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: CUDA error: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                   cudaGetErrorString(kittens_err_));                                            \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

} // namespace kittens
