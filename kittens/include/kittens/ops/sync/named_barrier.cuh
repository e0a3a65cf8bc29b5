/**
 * @file
 * @brief Named hardware barriers (bar.sync / bar.arrive) and block-wide fences.
 *
 * Barrier 0 is what __syncthreads uses. The LCF template reserves 13, 14 and 15
 * (lcf/lcf_sm90.cuh); kernels own the rest.
 */
#pragma once

#include "../../common/util.cuh"

namespace kittens {

/// Wait until `threads` threads (a multiple of 32) have reached barrier `id`.
KITTENS_DEVICE void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/// Arrive at barrier `id` without waiting (`threads` must match the waiters' count).
KITTENS_DEVICE void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

namespace warpgroup {
/// Synchronise the 128 threads of the calling warpgroup on barrier `id`.
KITTENS_DEVICE void sync(int id) { named_sync(id, WARPGROUP_THREADS); }
} // namespace warpgroup

/// Order this thread's ordinary shared-memory writes before later async-proxy reads
/// (TMA store, wgmma). Each writing thread calls it, then the threads synchronise.
KITTENS_DEVICE void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

} // namespace kittens
