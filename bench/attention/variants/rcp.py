# Variant: finish's 1 / l by the approximate reciprocal (rcp.approx.ftz) instead of rcp.rn.
import sys
p = sys.argv[1]; s = open(p).read()
fn = r'''
__device__ __forceinline__ float tkc_rcp(float x) { float y; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
'''
old = "(1.0f / kittens::at(args.state.l, tkc_e))"
k = s.count(old); s = s.replace(old, "tkc_rcp(kittens::at(args.state.l, tkc_e))")
idx = s.rfind("#include"); idx = s.index("\n", idx) + 1
s = s[:idx] + fn + s[idx:]
open(p, "w").write(s); print("rcp", k, file=sys.stderr)
