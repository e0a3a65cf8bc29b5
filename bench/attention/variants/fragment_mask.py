"""Probe edit (not shipped): the causal mask applied fragment by fragment.

The generated compute tests the mask's corners over the warp's whole 16-row slice and,
where any element changes, runs the masked select over every element. Here each 16x16
fragment is classified by its own corners (the condition is affine, so they decide):
untouched fragments are skipped, wholly masked ones are filled, and only the fragment on
the diagonal compares element by element. MASK_MODE=none drops the mask altogether
(wrong results; an upper bound on what the mask costs).

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import os, re, sys

path = sys.argv[1]
src = open(path).read()
mode = os.environ.get("MASK_MODE", "fragment")
pat = re.compile(r"if \(!\(!tkc_cmp0\(tkc_corner\[0\]\) && !tkc_cmp0\(tkc_corner\[1\]\) &&\s*"
                 r"!tkc_cmp0\(tkc_corner\[2\]\) &&\s*!tkc_cmp0\(tkc_corner\[3\]\)\)\)\s*"
                 r"kittens::apply\(s, \[&\]\(const kittens::element &tkc_e\) \{")
n = len(pat.findall(src))
if n == 0:
    sys.exit(0)
if mode == "none":
    src = pat.sub("if (false) kittens::apply(s, [&](const kittens::element &tkc_e) {", src)
else:
    src = pat.sub("tkc_probe::apply_by_fragment(s, tkc_cmp0, -INFINITY, [&](const kittens::element &tkc_e) {", src)
    helper = r'''
namespace tkc_probe {
// dst(e) = f(e) where the affine condition `cond` may hold: each 16x16 fragment's corners
// decide whether it is untouched (skipped), wholly covered (filled with `value`) or split.
template <class RT, class C, class F>
__device__ __forceinline__ void apply_by_fragment(RT &dst, C cond, float value, F f) {
  using P = typename RT::packed;
  const int l = kittens::laneid();
#pragma unroll
  for (int i = 0; i < RT::height; ++i)
#pragma unroll
    for (int j = 0; j < RT::width; ++j) {
      const kittens::element c0{i, j, 0, 0, 16 * i, 16 * j}, c1{i, j, 0, 0, 16 * i, 16 * j + 15},
          c2{i, j, 0, 0, 16 * i + 15, 16 * j}, c3{i, j, 0, 0, 16 * i + 15, 16 * j + 15};
      const bool a0 = cond(c0), a1 = cond(c1), a2 = cond(c2), a3 = cond(c3);
      if (!a0 && !a1 && !a2 && !a3) continue;
      if (a0 && a1 && a2 && a3) {
#pragma unroll
        for (int k = 0; k < 4; ++k) dst.tiles[i][j].data[k] = kittens::convert<P>(make_float2(value, value));
        continue;
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float v[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const kittens::fragment::rc p = kittens::fragment::row_layout(l, k, h);
          v[h] = f(kittens::element{i, j, k, h, 16 * i + p.row, 16 * j + p.col});
        }
        dst.tiles[i][j].data[k] = kittens::convert<P>(make_float2(v[0], v[1]));
      }
    }
}
} // namespace tkc_probe
'''
    # after the last #include line
    idx = [m.end() for m in re.finditer(r"^#include[^\n]*\n", src, re.M)][-1]
    src = src[:idx] + helper + src[idx:]
open(path, "w").write(src)
print("fragment_mask: %d mask(s), mode %s" % (n, mode), file=sys.stderr)
