/**
 * @file
 * @brief Shared tile <-> register tile moves (ldmatrix / stmatrix for 16-bit tiles).
 *
 * Warp scope: one warp moves one register tile. For each 16x16 fragment, lane l points at
 * row l % 16, column 8 * (l / 16) of the fragment; `ldmatrix.x4` then delivers data[0..3]
 * of the row layout, and `ldmatrix.x4.trans` the column layout with registers 1 and 2
 * swapped. Float tiles use plain shared accesses in the fragment pattern: in the row layout
 * one 8-byte access a pair (its two columns are adjacent in every layout: a swizzle moves
 * 16-byte units, and a pair starts at an even column); two 4-byte accesses would touch only
 * the even banks. A half-warp's 8-byte accesses cover the 32 banks once under the 32-byte
 * swizzle, twice under 128 bytes (its rows meet pairwise), and under 64 bytes once in the
 * block order fragment::swizzle64_block gives (Fragment.FloatStoresFillTheBanksOnce counts
 * them). The column layout's pairs run down a column: two accesses.
 * The warpgroup variants give warp w of the group rows [w * R, (w + 1) * R) of the tile.
 */
#pragma once

#include "../../types/register/rt.cuh"
#include "../../types/shared/st.cuh"

namespace kittens {

namespace detail {
template <class ST> KITTENS_DEVICE uint32_t frag_row_addr(const ST &s, int fr, int fc) {
  const int l = laneid();
  return smem_addr(s.base()) + s.offset(fr + (l % 16), fc + 8 * (l / 16));
}
} // namespace detail

/// Load a register tile from a shared tile (dtype conversion for float tiles from 16-bit sources is not provided).
template <ducks::rt::all RT, ducks::st::all ST> KITTENS_DEVICE void load(RT &dst, const ST &src) {
  using T = typename RT::dtype;
  using U = typename ST::dtype;
  static_assert(RT::rows == ST::rows && RT::cols == ST::cols, "kittens::load(rt, st): tile shapes differ");
  static_assert(std::is_same_v<T, U>, "kittens::load(rt, st): dtypes differ; load then convert with copy()");
  if constexpr (sizeof(T) == 2) {
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        uint32_t a = detail::frag_row_addr(src, 16 * i, 16 * j), r0, r1, r2, r3;
        if constexpr (RT::layout::is_row) {
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {%0, %1, %2, %3}, [%4];\n"
                       : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
          dst.tiles[i][j].data[0] = from_u32<packed_t<T>>(r0);
          dst.tiles[i][j].data[1] = from_u32<packed_t<T>>(r1);
          dst.tiles[i][j].data[2] = from_u32<packed_t<T>>(r2);
          dst.tiles[i][j].data[3] = from_u32<packed_t<T>>(r3);
        } else {
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0, %1, %2, %3}, [%4];\n"
                       : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
          dst.tiles[i][j].data[0] = from_u32<packed_t<T>>(r0);
          dst.tiles[i][j].data[1] = from_u32<packed_t<T>>(r2);
          dst.tiles[i][j].data[2] = from_u32<packed_t<T>>(r1);
          dst.tiles[i][j].data[3] = from_u32<packed_t<T>>(r3);
        }
      }
    }
  } else {
    const int l = laneid();
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
          if constexpr (RT::layout::is_row) {
            auto p = fragment::row_layout(l, k, 0);
            dst.tiles[i][j].data[k] = *reinterpret_cast<const float2 *>(&src.at(16 * i + p.row, 16 * j + p.col));
          } else {
            auto p = fragment::col_layout(l, k, 0);
            dst.tiles[i][j].data[k].x = src.at(16 * i + p.row, 16 * j + p.col);
            dst.tiles[i][j].data[k].y = src.at(16 * i + p.row + 1, 16 * j + p.col);
          }
        }
      }
    }
  }
}

/// Store a register tile into a shared tile. A float register tile may be stored into a
/// 16-bit shared tile (converted in registers, rounding to nearest even).
template <ducks::st::all ST, ducks::rt::all RT> KITTENS_DEVICE void store(ST &dst, const RT &src) {
  using T = typename ST::dtype;
  using U = typename RT::dtype;
  static_assert(RT::rows == ST::rows && RT::cols == ST::cols, "kittens::store(st, rt): tile shapes differ");
  if constexpr (sizeof(T) == 2) {
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        uint32_t a = detail::frag_row_addr(dst, 16 * i, 16 * j);
        uint32_t r[4];
        KITTENS_UNROLL for (int k = 0; k < 4; ++k) r[k] = as_u32(convert<packed_t<T>>(src.tiles[i][j].data[k]));
        if constexpr (RT::layout::is_row) {
          asm volatile("stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r[0]),
                       "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
        } else {
          asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a),
                       "r"(r[0]), "r"(r[2]), "r"(r[1]), "r"(r[3]) : "memory");
        }
      }
    }
  } else {
    static_assert(std::is_same_v<U, float>, "kittens::store(st_fl, rt): only float register tiles store into float shared tiles");
    const int l = laneid();
    if constexpr (RT::layout::is_row && ST::swizzle_bytes == 64) {
      // Each half-warp's rows r and r + 2 would meet in the same banks with one block order:
      // fragment::swizzle64_block gives them opposite orders (a select per element, the
      // pair's register chosen per lane).
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
        KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
          KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
            KITTENS_UNROLL for (int access = 0; access < 2; ++access) {
              const int block = fragment::swizzle64_block(l, access);
              const auto p = fragment::row_layout(l, h + 2 * block, 0);
              *reinterpret_cast<float2 *>(&dst.at(16 * i + p.row, 16 * j + p.col)) =
                  block ? src.tiles[i][j].data[h + 2] : src.tiles[i][j].data[h];
            }
          }
        }
      }
    } else {
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
        KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
          KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
            if constexpr (RT::layout::is_row) {
              auto p = fragment::row_layout(l, k, 0);
              *reinterpret_cast<float2 *>(&dst.at(16 * i + p.row, 16 * j + p.col)) = src.tiles[i][j].data[k];
            } else {
              auto p = fragment::col_layout(l, k, 0);
              dst.at(16 * i + p.row, 16 * j + p.col) = src.tiles[i][j].data[k].x;
              dst.at(16 * i + p.row + 1, 16 * j + p.col) = src.tiles[i][j].data[k].y;
            }
          }
        }
      }
    }
  }
}

namespace warpgroup {
/// Each warp w of the warpgroup loads rows [w*RT::rows, (w+1)*RT::rows) of `src`.
template <ducks::rt::all RT, class ST> KITTENS_DEVICE void load(RT &dst, ST &src) {
  static_assert(ST::rows == 4 * RT::rows && ST::cols == RT::cols,
                "kittens::warpgroup::load: the shared tile must be 4x the register tile's rows (one slice per warp)");
  auto v = src.template subtile<RT::rows, RT::cols>(warpid(), 0);
  kittens::load(dst, v);
}
/// Each warp w of the warpgroup stores its tile to rows [w*RT::rows, (w+1)*RT::rows) of `dst`.
template <class ST, ducks::rt::all RT> KITTENS_DEVICE void store(ST &dst, const RT &src) {
  static_assert(ST::rows == 4 * RT::rows && ST::cols == RT::cols,
                "kittens::warpgroup::store: the shared tile must be 4x the register tile's rows (one slice per warp)");
  auto v = dst.template subtile<RT::rows, RT::cols>(warpid(), 0);
  kittens::store(v, src);
}
} // namespace warpgroup

} // namespace kittens
