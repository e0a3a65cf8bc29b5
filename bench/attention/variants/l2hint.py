# Probe: L2 cache hints on the bulk copies. HINT letters: o = O's TMA store evict_first,
# k = K/V loads evict_last, q = Q loads evict_first.
import os, re, sys
p = sys.argv[1]; s = open(p).read(); mode = os.environ.get("HINT", "o")
fn = r'''
namespace tkc_hint {
__device__ __forceinline__ uint64_t policy_first() { uint64_t p; asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ uint64_t policy_last() { uint64_t p; asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p; }
template <class ST> __device__ __forceinline__ void store(const kittens::tile_map<ST> &m, const ST &src, kittens::coord t) {
  const uint64_t pol = policy_first();
  int c[5];
  kittens::tma::detail::tile_coords<ST>(t, c);
  if constexpr (ST::swizzle_bytes == 0) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%2, %3, %4, %5}], [%1], %6;\n"
                 ::"l"(kittens::tma::detail::map_ptr(&m.map)), "r"(kittens::smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "l"(pol) : "memory");
  } else if (m.chunk_copies == 0) {
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%2, %3, %4, %5, %6}], [%1], %7;\n"
                 ::"l"(kittens::tma::detail::map_ptr(&m.map)), "r"(kittens::smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]),
                 "r"(c[4]), "l"(pol) : "memory");
  } else {
    for (int j = 0; j < m.chunk_copies; ++j)
      asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%2, %3, %4, %5}], [%1], %6;\n"
                   ::"l"(kittens::tma::detail::map_ptr(&m.map)), "r"(kittens::smem_addr(&src) + uint32_t(j * ST::rows * ST::swizzle_bytes)),
                   "r"(t.c * ST::cols + j * ST::chunk_cols), "r"(t.r * ST::rows), "r"(t.d), "r"(t.b), "l"(pol) : "memory");
  }
}
template <class ST> __device__ __forceinline__ void load(ST &dst, const kittens::tile_map<ST> &m, kittens::coord t, kittens::semaphore &bar, bool last) {
  const uint64_t pol = last ? policy_last() : policy_first();
  const kittens::coord e = kittens::tile_to_element(t, ST::rows, ST::cols);
  if constexpr (ST::swizzle_bytes == 0) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(kittens::smem_addr(&dst)), "l"(kittens::tma::detail::map_ptr(&m.map)),
                 "r"(e.c), "r"(e.r), "r"(e.d), "r"(e.b), "r"(kittens::smem_addr(&bar)), "l"(pol) : "memory");
  } else if (m.chunk_copies == 0) {
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;\n" ::"r"(kittens::smem_addr(&dst)), "l"(kittens::tma::detail::map_ptr(&m.map)),
                 "r"(0), "r"(e.r), "r"(e.c / ST::chunk_cols), "r"(e.d), "r"(e.b), "r"(kittens::smem_addr(&bar)), "l"(pol) : "memory");
  } else {
    for (int j = 0; j < m.chunk_copies; ++j)
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                   " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n"
                   ::"r"(kittens::smem_addr(&dst) + uint32_t(j * ST::rows * ST::swizzle_bytes)), "l"(kittens::tma::detail::map_ptr(&m.map)),
                   "r"(e.c + j * ST::chunk_cols), "r"(e.r), "r"(e.d), "r"(e.b),
                   "r"(kittens::smem_addr(&bar)), "l"(pol) : "memory");
  }
}
} // namespace tkc_hint
'''
n = 0
if "o" in mode:
    s, k = re.subn(r"kittens::tma::store_async\(args\.globals\.O,", "tkc_hint::store(args.globals.O,", s); n += k
if "k" in mode:
    s, k = re.subn(r"kittens::tma::load_async\(\s*(args\.input\.[kv], args\.globals\.[KV],\s*\{[^}]*\},\s*args\.inputs_arrived)\)", r"tkc_hint::load(\1, true)", s); n += k
if "q" in mode:
    s, k = re.subn(r"kittens::tma::load_async\(\s*(args\.scratch\.q\[[^\]]*\]\[tkc_wg\], args\.globals\.Q,\s*\{[^}]*\},\s*args\.setup_arrived)\)", r"tkc_hint::load(\1, false)", s); n += k
idx = s.rfind("#include"); idx = s.index("\n", idx) + 1
s = s[:idx] + fn + s[idx:]
open(p, "w").write(s); print("l2hint", mode, n, file=sys.stderr)
