/**
 * @file
 * @brief Bump allocator over dynamic shared memory with 1024-byte alignment.
 *
 * The runtime only guarantees 16-byte alignment of `extern __shared__` memory, so the
 * allocator rounds the base address up itself; ask for `shared_bytes_needed(n)` =
 * n + 1024 bytes at launch to leave room for that.
 */
#pragma once

#include "../../common/util.cuh"

namespace kittens {

/// Dynamic shared memory to request for `payload` bytes laid out by shared_allocator.
KITTENS_HOST_DEVICE constexpr int shared_bytes_needed(int payload) { return payload + 1024; }

/// Hands out aligned pieces of dynamic shared memory in order.
struct shared_allocator {
  char *ptr;
  /// Start at `base`, rounded up to 1024 bytes.
  /// The padding is computed from the shared-window address and added to the pointer (not
  /// rounded as a generic address), so the compiler can still see that every tile address is
  /// a shared one: descriptors and TMA addresses then need no generic-to-shared conversion.
  KITTENS_DEVICE explicit shared_allocator(void *base) {
    ptr = static_cast<char *>(base) + ((0u - smem_addr(base)) & 1023u);
  }
  /// Allocate one T (aligned to alignof(T), at least 16 bytes).
  template <class T> KITTENS_DEVICE T &allocate() {
    constexpr uintptr_t a = alignof(T) < 16 ? 16 : alignof(T);
    uintptr_t p = (reinterpret_cast<uintptr_t>(ptr) + a - 1) & ~(a - 1);
    ptr = reinterpret_cast<char *>(p + sizeof(T));
    return *reinterpret_cast<T *>(p);
  }
  /// Allocate an array of N T's.
  template <class T, int N> KITTENS_DEVICE T (&allocate())[N] {
    constexpr uintptr_t a = alignof(T) < 16 ? 16 : alignof(T);
    uintptr_t p = (reinterpret_cast<uintptr_t>(ptr) + a - 1) & ~(a - 1);
    ptr = reinterpret_cast<char *>(p + sizeof(T) * N);
    return *reinterpret_cast<T(*)[N]>(p);
  }
};

} // namespace kittens
