"""Device helpers the probe edits (overlap/edit.py, fa3/edit.py) put into the CUDA they edit:
empty asm statements that pin registers, so that ptxas keeps an instruction between two
wgmma waits instead of moving it past the second."""
PINS = """
template <class RT> __device__ inline void probe_pin(RT &t) {
#pragma unroll
  for (int i = 0; i < RT::height; ++i)
#pragma unroll
    for (int j = 0; j < RT::width; ++j)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        auto &x = t.tiles[i][j].data[k];
        if constexpr (sizeof(x) == 8) asm volatile("" : "+f"(x.x), "+f"(x.y));
        else asm volatile("" : "+r"(*reinterpret_cast<unsigned *>(&x)));
      }
}
template <class RV> __device__ inline void probe_pin_rv(RV &v) {
#pragma unroll
  for (int i = 0; i < (int)(sizeof(v.data) / sizeof(v.data[0])); ++i) asm volatile("" : "+f"(v.data[i].x), "+f"(v.data[i].y));
}
"""
