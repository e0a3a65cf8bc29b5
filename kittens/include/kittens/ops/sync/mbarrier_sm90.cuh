/**
 * @file
 * @brief mbarrier semaphores: init, arrive, expect-tx, parity wait and test.
 *
 * A `semaphore` is one 8-byte mbarrier in shared memory. It completes a phase when its
 * pending arrival count reaches zero and every expected transaction byte has landed. A
 * waiter names the parity (0/1) of the phase it waits for; on a fresh semaphore, waiting
 * for parity 1 returns at once (the "previous" phase counts as complete), which is how a
 * ring of free slots starts out.
 */
#pragma once

#include <cstdint>

#include "../../common/util.cuh"

namespace kittens {

/// One mbarrier in shared memory.
struct alignas(8) semaphore {
  uint64_t value;
};

/// Initialise with the number of arrivals that complete each phase (one thread does this).
KITTENS_DEVICE void init_semaphore(semaphore &s, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(&s)), "r"(arrivals) : "memory");
}
/// Make initialised semaphores visible to the async proxy (TMA); call after the inits, before the block barrier.
KITTENS_DEVICE void fence_semaphore_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
/// Invalidate a semaphore before its memory is reused for something else.
KITTENS_DEVICE void invalidate_semaphore(semaphore &s) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(smem_addr(&s)) : "memory");
}

/// Arrive `count` times (release semantics at CTA scope).
KITTENS_DEVICE void arrive(semaphore &s, uint32_t count = 1) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(&s)), "r"(count) : "memory");
}

/// Arrive once and add `bytes` to the transaction count the current phase waits for.
KITTENS_DEVICE void expect_bytes(semaphore &s, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(&s)), "r"(bytes)
               : "memory");
}
/// Add `bytes` to the expected transaction count without arriving.
KITTENS_DEVICE void expect_bytes_no_arrive(semaphore &s, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(&s)), "r"(bytes) : "memory");
}
/// Bytes a TMA copy of `T` moves: the payload of a shared tile or vector (sizeof would add
/// the padding `alignas(1024)` puts after a tile that is not a multiple of 1024 bytes), and
/// sizeof for any other struct, which therefore must hold nothing but TMA-filled tiles
/// whose sizes are multiples of 1024 bytes (kittens' LCF input blocks static_assert this).
template <class T> constexpr uint32_t transfer_bytes() {
  if constexpr (requires { T::bytes; }) return uint32_t(T::bytes);
  else return uint32_t(sizeof(T));
}
/// Arrive once expecting exactly the bytes of the given shared objects.
template <class... Ts> KITTENS_DEVICE void expect(semaphore &s, const Ts &...) {
  expect_bytes(s, (0u + ... + transfer_bytes<Ts>()));
}

/// Non-blocking: has the phase with this parity completed?
KITTENS_DEVICE bool test_wait(semaphore &s, int parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done) : "r"(smem_addr(&s)), "r"(parity) : "memory");
  return done != 0;
}

/// Block until the phase with this parity has completed.
///
/// Define KITTENS_WAIT_TIMEOUT_CYCLES (e.g. in tests) to turn a hang into an error: a wait
/// that spins longer prints which block/thread/parity and traps. A hang almost always means
/// an expected byte count or an arrival count does not match what was issued.
KITTENS_DEVICE void wait(semaphore &s, int parity) {
#if defined(KITTENS_WAIT_TIMEOUT_CYCLES)
  const long long start = clock64();
  while (true) {
    uint32_t done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_addr(&s)), "r"(parity) : "memory");
    if (done) return;
    if (clock64() - start > (long long)(KITTENS_WAIT_TIMEOUT_CYCLES)) {
      printf("kittens: mbarrier wait timed out (block %d, thread %d, parity %d): an expected byte count or arrival "
             "count does not match what was issued\n", int(blockIdx.x), int(threadIdx.x), parity);
      __trap();
    }
  }
#else
  asm volatile("{\n .reg .pred p;\n"
               "WAIT_%=:\n"
               " mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1;\n"
               " @!p bra WAIT_%=;\n}\n" ::"r"(smem_addr(&s)), "r"(parity) : "memory");
#endif
}

/// Per-thread phase bits for a ring of up to 16 stages with two semaphores per stage
/// ("full" in bits 0..15, "empty" in bits 16..31). Empty waits start at parity 1 so every
/// slot begins free; each wait flips its bit.
struct ring_phases {
  uint32_t bits = 0xFFFF0000u;
  KITTENS_DEVICE int full(int stage) const { return (bits >> stage) & 1; }
  KITTENS_DEVICE int empty(int stage) const { return (bits >> (16 + stage)) & 1; }
  KITTENS_DEVICE void flip_full(int stage) { bits ^= 1u << stage; }
  KITTENS_DEVICE void flip_empty(int stage) { bits ^= 1u << (16 + stage); }
};

} // namespace kittens
