"""Probe edit (not shipped): the P·V product issued in CHUNKS pieces along the keys,
each right after the exponentials of its columns, so that the tensor core works on the
first columns while the warp computes the next (the row sum of P kept in four partial sums
per row). Applied to the generated attention kernels (any D, causal or not) by
bench/attention/variants/tkc-chunk; CHUNKS=2 by default."""
import os, re, sys
path = sys.argv[1]
src = open(path).read()
NC = int(os.environ.get("CHUNKS", "2"))
start = "      kittens::rt_fl<16, 128> p;\n"
end = "        kittens::arrive(args.inputs_finished); // this warp is done with the stage\n"
n = 0
out = []
pos = 0
while True:
    a = src.find(start, pos)
    if a < 0: break
    b = src.index(end, a) + len(end)
    seg = src[a:b]
    m = re.search(r"mma_AB\(args\.state\.o, tkc_p_bf16, args\.input\.(\w+), true\)", seg)
    assert m, "no P·V product"
    vname = m.group(1)
    ocols = re.search(r"kittens::rt_fl<16, (\d+)> o;", src).group(1)
    W = 8  # 128 keys = 8 fragment columns
    per = W // NC
    chunks = []
    fence0 = "kittens::warpgroup::mma_fence(args.state.o);"
    fence = 'asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");'
    for c in range(NC):
        pin = "" if c == 0 or not os.environ.get("PIN") else f"""        KITTENS_UNROLL for (int j = {per * c}; j < {per * (c + 1)}; ++j)
          KITTENS_UNROLL for (int k = 0; k < 4; ++k)
            asm volatile("" : "+f"(s.tiles[0][j].data[k].x), "+f"(s.tiles[0][j].data[k].y));
"""
        chunks.append(f"""      {{ // chunk {c}: keys {16 * per * c}..{16 * per * (c + 1) - 1}
{pin}        KITTENS_UNROLL for (int j = {per * c}; j < {per * (c + 1)}; ++j)
          KITTENS_UNROLL for (int k = 0; k < 4; ++k) {{
            float v2[2];
            KITTENS_UNROLL for (int h = 0; h < 2; ++h) {{
              const kittens::fragment::rc fp = kittens::fragment::row_layout(tkc_lane, k, h);
              const kittens::element e{{0, j, k, h, fp.row, 16 * j + fp.col}};
              const float x = (16 * j + fp.col < tkc_lim)
                  ? kittens::fast::exp2(kittens::at(s, e) * tkc_sc - kittens::at(m_new, e)) : 0.0f;
              v2[h] = x;
              tkc_sum[(k & 1) * 2 + (j & 1)] += x;
            }}
            tkc_pb.tiles[0][j].data[k] = kittens::convert<kittens::rt_bf<16, 128>::packed>(make_float2(v2[0], v2[1]));
          }}
        {fence0 if c == 0 else fence}
        KITTENS_UNROLL for (int j = {per * c}; j < {per * (c + 1)}; ++j)
          kittens::detail::wgmma::op<kittens::bf16, {ocols}>::template rs<1>(
              args.state.o.tiles[0], tkc_pb.tiles[0][j],
              kittens::warpgroup::step<std::remove_reference_t<decltype(args.input.{vname})>>(tkc_db, kittens::wgmma_desc::major::mn, j), 1);
        kittens::warpgroup::mma_commit_group();
      }}
""")
    new = f"""      // PROBE: P·V in {NC} chunks
      row_vector r8;
      kittens::apply(r8, [&](const kittens::vector_element &tkc_e) {{
        return kittens::fast::exp2((kittens::at(args.state.m, tkc_e) - kittens::at(m_new, tkc_e)));
      }});
      if (kittens::warp_any_differs(r8, 1.0f))
        kittens::apply(args.state.o, [&](const kittens::element &tkc_e) {{
          return (kittens::at(args.state.o, tkc_e) * kittens::at(r8, tkc_e));
        }});
      const int tkc_lim = static_cast<int>(args.globals.N - (long long)args.iter * 128);
      const float tkc_sc = args.globals.scale * 1.442695f;
      const int tkc_lane = kittens::laneid();
      float tkc_sum[4] = {{0.f, 0.f, 0.f, 0.f}};
      kittens::rt_bf<16, 128> tkc_pb;
      const uint64_t tkc_db = kittens::warpgroup::descriptor(args.input.{vname}, kittens::wgmma_desc::major::mn);
{''.join(chunks)}      {{
        row_vector t1;
        kittens::detail::finish_along(t1.data[0], tkc_sum[0] + tkc_sum[1], tkc_sum[2] + tkc_sum[3], kittens::base_ops::add{{}}, false);
        kittens::apply(args.state.l, [&](const kittens::vector_element &tkc_e) {{
          return kittens::at(args.state.l, tkc_e) * kittens::at(r8, tkc_e) + kittens::at(t1, tkc_e);
        }});
      }}
      kittens::apply(args.state.m, [&](const kittens::vector_element &tkc_e) {{
        return kittens::at(m_new, tkc_e);
      }});
      kittens::warpgroup::mma_async_wait<0>();
      if (kittens::laneid() == 0)
        kittens::arrive(args.inputs_finished); // this warp is done with the stage
"""
    out.append(src[pos:a]); out.append(new); pos = b; n += 1
out.append(src[pos:])
assert n >= 1
open(path, "w").write("".join(out))
