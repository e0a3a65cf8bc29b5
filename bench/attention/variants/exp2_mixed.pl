# Probe edit (not shipped): part of the softmax's exponentials computed on the FMA pipe
# (2^x = 2^n * 2^f, n = round(x), degree-4 Taylor polynomial of 2^f on [-1/2, 1/2], relative
# error below 5e-5; x clamped at -126, where 2^x is negligible beside the row's maximum 1), the rest on MUFU; the fragment columns j with bit j of POLYMASK set use
# the polynomial. Applied by tkc-edit through VPERL="$(cat exp2_mixed.pl)".
s{#include <string>\n}{#include <string>\n
namespace probe {
__device__ __forceinline__ float exp2_poly(float x) {
  x = fmaxf(x, -126.0f);
  const float magic = 12582912.0f; // 1.5 * 2^23: x + magic rounds x to an integer in the low bits
  const float xr = x + magic;
  const float n = xr - magic;
  const float f = x - n; // [-0.5, 0.5]
  float p = 0.0096181291f;           // ln2^4 / 4!  (Taylor series of 2^f = e^(f ln2))
  p = fmaf(p, f, 0.0555041087f);      // ln2^3 / 3!
  p = fmaf(p, f, 0.2402265070f);      // ln2^2 / 2!
  p = fmaf(p, f, 0.6931471806f);
  p = fmaf(p, f, 1.0f);
  return __int_as_float(__float_as_int(p) + ((__float_as_int(xr) - __float_as_int(magic)) << 23));
}
template <int MASK> __device__ __forceinline__ float exp2_mixed(const kittens::element &e, float x) {
  return ((MASK >> e.j) & 1) ? exp2_poly(x) : kittens::fast::exp2(x);
}
} // namespace probe
};
s{return kittens::fast::exp2\(\(\(kittens::at\(s, tkc_e\)}{return probe::exp2_mixed<POLYMASK_VALUE>(tkc_e, ((kittens::at(s, tkc_e)}g;
