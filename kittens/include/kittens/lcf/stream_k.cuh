/**
 * @file
 * @brief Stream-K for a persistent matrix-product kernel: the last partial wave of tiles
 * shared out by loop steps, and the exchange of partial results it needs.
 *
 * T tiles of `k_count` loop steps each on G persistent blocks take ceil(T / G) tiles' time
 * while the blocks average T / G: with R = T % G > 0, G - R blocks idle through the last
 * wave. Shared out, every block first runs `whole` = T / G tiles (the kernel's own order, the
 * first G * whole tiles), then an equal share of the R tiles left: their R * k_count steps as
 * one range of `units`, block b taking [b U / G, (b + 1) U / G). A share is shorter than a
 * tile, so it is at most two parts: the tail of one tile and the head of the next.
 *
 * A block runs the part that ends inside its tile first (it is another block's to finish),
 * then the one that ends at its tile's last step: that part finishes the tile, after adding the
 * partial results of the tile's other parts, which their blocks ran as their first part. So
 * every block in its first part is at step t of its tile at time t, and every block in its
 * second part at the same step t + (k_count - share): blocks on neighbouring tiles load the
 * same operand slices together, as in the whole waves (with the other order, owner the head,
 * a probe read 1.85x the DRAM bytes at 4096^3; bench/NOTES.md, session 29). A block waits only
 * for blocks of lower index, and only after it has published its own first part.
 *
 * Partial results go through a workspace the launcher provides: one slot per block and
 * consumer warpgroup (a block publishes at most one part), the thread's accumulator fragments
 * in order, so that the finishing warpgroup's same thread reads back the values it adds. A slot
 * is published by a release store of the launch's token on its flag and consumed by an acquire
 * of it, and the consumer sets the flag back to 0: a token other than the launch's (a zeroed
 * flag, a previous launch's) is never taken for it.
 *
 *     G = 4 blocks, R = 3 tiles of 8 steps (U = 24, a share of 6):
 *        block 0: tile 0 [0, 6)                      (first part, published)
 *        block 1: tile 1 [0, 4), then tile 0 [6, 8)  (finishes tile 0)
 *        block 2: tile 2 [0, 2), then tile 1 [4, 8)  (finishes tile 1)
 *        block 3: tile 2 [2, 8)                      (finishes tile 2)
 */
#pragma once

#include "../common/config.cuh"

namespace kittens {

/// Loop steps a share must save over a whole tile for stream-K to pay: each share adds up to
/// two task boundaries and a partial result's exchange, ~8-10 steps of 128 x 256 x 64 on an
/// H100; measured, a share 7.8 steps short of a tile (4096^3) lost 3.6 %, one 27 steps short
/// (4096 x 14336 x 4096) gained 0.9 % (bench/NOTES.md, session 29).
inline constexpr int STREAM_K_MIN_SAVING = 16;
/// Steps a share must have at least (so that no block's share is empty).
inline constexpr int STREAM_K_MIN_SHARE = 4;

/// Whether `tiles` tiles of `k_count` steps on `blocks` blocks share out their last wave.
KITTENS_HOST_DEVICE constexpr bool stream_k_pays(long long tiles, int blocks, int k_count) {
  if (blocks < 1 || tiles <= blocks) return false;
  const long long shared = tiles % blocks, units = shared * k_count;
  if (shared == 0 || units < (long long)STREAM_K_MIN_SHARE * blocks) return false;
  // k_count - units / blocks >= MIN_SAVING, in integers.
  return ((long long)k_count - STREAM_K_MIN_SAVING) * blocks >= units;
}

/// One part of a block's share: steps [k0, k0 + iters) of shared tile `tile` (0 .. shared - 1,
/// counted from the first shared tile); `finishes` when it ends at the tile's last step.
struct stream_k_part {
  int tile;
  int k0;
  int iters; ///< 0: the block has no such part
  bool finishes;
};

/// Part `part` (0: run first, 1: second) of block `block`'s share.
KITTENS_HOST_DEVICE constexpr stream_k_part stream_k_part_of(int block, int blocks, int shared, int k_count,
                                                             int part) {
  const long long units = (long long)shared * k_count;
  const long long u0 = block * units / blocks, u1 = (block + 1) * units / blocks;
  const long long edge = (u0 / k_count + 1) * k_count; // the first tile edge past u0
  const bool two = edge < u1;
  // The second range [edge, u1) runs first when it ends inside its tile.
  const bool swap = two && u1 != edge + k_count;
  const int which = swap ? 1 - part : part;
  if (part > 1 || (part == 1 && !two) || u0 >= u1) return {0, 0, 0, false};
  const long long s = which == 0 ? u0 : edge;
  const long long e = which == 0 ? (u1 < edge ? u1 : edge) : u1;
  return {static_cast<int>(s / k_count), static_cast<int>(s % k_count), static_cast<int>(e - s),
          e == (s / k_count + 1) * k_count};
}

/// Whether block `other` (< the finishing block) ran a part of shared tile `tile`: the
/// finishing block adds the partials of blocks block - 1, block - 2, ... while this holds.
KITTENS_HOST_DEVICE constexpr bool stream_k_contributes(int other, int blocks, int shared, int k_count,
                                                        int tile) {
  const long long units = (long long)shared * k_count;
  return other >= 0 && (other + 1) * units / blocks > (long long)tile * k_count;
}

/// What a stream-K launch gives its kernel (a member of the globals).
struct stream_k_share {
  void *partials = nullptr;                // slots of `slot_bytes`, one per block and warpgroup
  unsigned long long *flags = nullptr;     // one per slot
  unsigned long long token = 0;            // this launch's: never 0
  int whole = 0;                           // whole tiles a block runs first
  int shared = 0;                          // tiles shared out after them (0: none)
};

#if defined(__CUDACC__)
namespace stream_k {

/// This thread's float4 `q` of slot `slot` holding `quads` float4 a thread (128 threads).
KITTENS_DEVICE float4 *slot_quad(const stream_k_share &s, int slot, int quads, int q) {
  return reinterpret_cast<float4 *>(s.partials) + ((size_t)slot * quads + q) * WARPGROUP_THREADS +
         threadIdx.x % WARPGROUP_THREADS;
}

/// Writes this thread's fragments of the register tiles `acc[0..N)` to slot `slot` (L2 only:
/// another multiprocessor reads them).
template <int N, class RT> KITTENS_DEVICE void store_partial(const stream_k_share &s, int slot, const RT (&acc)[N]) {
  constexpr int quads = N * RT::height * RT::width * 2;
  KITTENS_UNROLL for (int n = 0; n < N; ++n) {
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          const auto &x = acc[n].tiles[i][j].data[2 * h], &y = acc[n].tiles[i][j].data[2 * h + 1];
          const int q = ((n * RT::height + i) * RT::width + j) * 2 + h;
          __stcg(slot_quad(s, slot, quads, q), make_float4(x.x, x.y, y.x, y.y));
        }
      }
    }
  }
}

/// Adds slot `slot`'s fragments (written by store_partial from the same thread of another
/// block) into `acc[0..N)`.
template <int N, class RT> KITTENS_DEVICE void add_partial(const stream_k_share &s, int slot, RT (&acc)[N]) {
  constexpr int quads = N * RT::height * RT::width * 2;
  KITTENS_UNROLL for (int n = 0; n < N; ++n) {
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          const int q = ((n * RT::height + i) * RT::width + j) * 2 + h;
          const float4 v = __ldcg(slot_quad(s, slot, quads, q));
          auto &x = acc[n].tiles[i][j].data[2 * h], &y = acc[n].tiles[i][j].data[2 * h + 1];
          x.x += v.x;
          x.y += v.y;
          y.x += v.z;
          y.y += v.w;
        }
      }
    }
  }
}

/// The same for one register tile.
template <class RT> KITTENS_DEVICE void store_partial(const stream_k_share &s, int slot, const RT &acc) {
  store_partial(s, slot, *reinterpret_cast<const RT(*)[1]>(&acc));
}
template <class RT> KITTENS_DEVICE void add_partial(const stream_k_share &s, int slot, RT &acc) {
  add_partial(s, slot, *reinterpret_cast<RT(*)[1]>(&acc));
}

/// Publishes slot `slot`: one thread, after every thread of its warpgroup has stored its
/// fragments and met it at a barrier (the release is cumulative over what the barrier ordered).
KITTENS_DEVICE void publish(const stream_k_share &s, int slot) {
  __threadfence();
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(s.flags + slot), "l"(s.token) : "memory");
}

/// Waits until slot `slot` is published in this launch, then sets its flag back to 0: one
/// thread, before a barrier that its warpgroup's readers of the slot meet after it.
KITTENS_DEVICE void acquire(const stream_k_share &s, int slot) {
  unsigned long long seen;
  do {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(s.flags + slot) : "memory");
  } while (seen != s.token);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(s.flags + slot), "l"(0ull) : "memory");
}

} // namespace stream_k
#endif

} // namespace kittens
