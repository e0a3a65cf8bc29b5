"""Probe edit (not shipped; bench/attention/fa3/probe.py, bench/NOTES.md session 11).

Replaces the body of the two-warpgroup D = 128 non-causal kernel that tkc emitted from
attention_2wg.yaml with the structure FlashAttention-3 and cuDNN use, written by hand:
- K and V in separate stages of one ring (stage 2j holds k_j, 2j + 1 holds v_j), so that
  k_j is released as soon as its score product is done and v_j after P_j v_j, and the
  producer refills each as soon as it is free;
- the intra-warpgroup overlap: at key block j a warpgroup issues S_j = q k_jᵀ and then
  o += P_{j-1} v_{j-1}, waits for S_j only, runs the softmax while the product runs, then
  waits for it;
- optionally (T) the two warpgroups issue their products in turns (named barriers 5, 6),
  so that one's products run while the other runs its softmax;
- optionally (E) o is rescaled before the product is issued (FlashAttention-3's order),
  not after its wait.
The variant is read from the output path: a directory named like fa3_b176_s4_T_E_...
(b: key tile rows, s: stages, T, E as above). For N a multiple of 128 (both warpgroups
have rows in every task: turns would otherwise wait forever); probe.py checks the output.
"""
import os
import re
import sys

path = sys.argv[1]
m = re.search(r"fa3_b(\d+)_s(\d+)((?:_[A-Z])*)_", path)
assert m, "variant not in the output path: " + path
BKV, S = int(m.group(1)), int(m.group(2))
flags = set(m.group(3).split("_")) - {""}
TURNS, EARLY = "T" in flags, "E" in flags
src = open(path).read()
K = "attention_fwd_D128_kernel"
a = src.index("struct %s {" % K)
b = src.index("\n};\n", a) + len("\n};\n")

turn_wait = """      kittens::named_sync(5 + wg, 256); // this warpgroup's turn to issue
""" if TURNS else ""
turn_pass = """        kittens::named_arrive(6 - wg, 256); // the other warpgroup's turn
""" if TURNS else ""
turn_init = """      if (args.task_iter == 0 && kittens::warpgroupid() == 1)
        kittens::named_arrive(5, 256); // warpgroup 0 issues first
""" if TURNS else ""
early = """        if (kittens::warp_any_differs(args.state.r, 1.0f))
          kittens::apply(args.state.o, [&](const kittens::element &e) {
            return kittens::at(args.state.o, e) * kittens::at(args.state.r, e);
          });
""" if EARLY else ""
late = "" if EARLY else """      if (kittens::warp_any_differs(args.state.r, 1.0f))
        kittens::apply(args.state.o, [&](const kittens::element &e) {
          return kittens::at(args.state.o, e) * kittens::at(args.state.r, e);
        });
"""
last_early = """        if (kittens::warp_any_differs(args.state.r, 1.0f))
          kittens::apply(args.state.o, [&](const kittens::element &e) {
            return kittens::at(args.state.o, e) * kittens::at(args.state.r, e);
          });
""" if EARLY else ""

body = f"""struct {K} {{
  using kv_tile = kittens::st_bf<{BKV}, 128>;
  using k_tile = kv_tile;
  using v_tile = kv_tile;
  using q_tile = kittens::st_bf<64, 128>;
  using row_vector = kittens::rt_fl<16, 16>::col_vec;
  struct layout {{
    struct globals {{
      kittens::tile_map<q_tile> Q;
      kittens::tile_map<k_tile> K;
      kittens::tile_map<v_tile> V;
      kittens::tile_map<q_tile> O;
      float *L;
      int B;
      int H;
      int N;
      int H_kv;
      float scale;
      int b_count;
      int h_count;
      int i_count;
      int j_count;
    }};
    struct input_block {{
      kv_tile t; // k_j at stage 2j, v_j at 2j + 1
    }};
    struct scratch_block {{
      q_tile q[2];
    }};
    struct common_state {{
      int b;
      int h;
      int i;
    }};
    struct consumer_state {{
      kittens::rt_fl<16, 128> o;
      row_vector m;
      row_vector l;
      row_vector r;                 // the last rescale factor (applied to o when E)
      kittens::rt_bf<16, {BKV}> p;  // P of the last key block; its product not yet issued
      const kv_tile *v;
    }};
  }};
  static constexpr int INPUT_STAGES = {S};
  static constexpr int NUM_CONSUMER_WARPGROUPS = 2;
  static constexpr int PRODUCER_ARRIVALS = 1;
  static constexpr int CONSUMER_ARRIVALS = 8;
  static constexpr int PRODUCER_REGISTERS = 24;
  static constexpr int CONSUMER_REGISTERS = 240;

  __device__ static void common_setup(kittens::lcf::common_args<{K}> &args) {{
    const int task = args.task_iter * gridDim.x + blockIdx.x;
    if (task >= args.globals.b_count * args.globals.h_count * args.globals.i_count) {{
      args.num_iters = -1;
      return;
    }}
    int rest = task;
    args.common.i = rest % args.globals.i_count;
    rest /= args.globals.i_count;
    args.common.h = rest % args.globals.h_count;
    rest /= args.globals.h_count;
    args.common.b = rest % args.globals.b_count;
    args.num_iters = 2 * args.globals.j_count;
  }}

  struct producer {{
    __device__ static void setup(kittens::lcf::producer_setup_args<{K}> &) {{}}
    __device__ static void load(kittens::lcf::producer_load_args<{K}> &args) {{
      if (kittens::warpgroup::laneid() == 0) {{
        kittens::expect_bytes(args.inputs_arrived, (int)sizeof(kv_tile));
        const int hk = args.common.h / (args.globals.H / args.globals.H_kv);
        kittens::tma::load_async(args.input.t, (args.iter & 1) ? args.globals.V : args.globals.K,
                                 {{args.common.b, hk, args.iter >> 1, 0}}, args.inputs_arrived);
      }}
    }}
  }};

  struct consumer {{
    __device__ static void setup(kittens::lcf::consumer_setup_args<{K}> &args) {{
      const int wg = kittens::warpgroupid();
      if (kittens::warpgroup::laneid() == 0) {{
        kittens::expect_bytes(args.setup_arrived, 16384);
        kittens::tma::load_async(args.scratch.q[wg], args.globals.Q,
                                 {{args.common.b, args.common.h, args.common.i * 2 + wg, 0}},
                                 args.setup_arrived);
      }}
      kittens::zero(args.state.o);
      kittens::apply(args.state.m, [&](const kittens::vector_element &) {{ return -INFINITY; }});
      kittens::apply(args.state.l, [&](const kittens::vector_element &) {{ return 0.0f; }});
      kittens::apply(args.state.r, [&](const kittens::vector_element &) {{ return 1.0f; }});
      if ((long long)(args.common.i * 2 + wg) * 64 >= args.globals.N)
        args.compute_iters = 0;
{turn_init}      kittens::wait(args.setup_arrived, args.setup_phase);
    }}
    __device__ static void compute(kittens::lcf::consumer_compute_args<{K}> &args) {{
      const int wg = kittens::warpgroupid();
      const int j = args.iter >> 1;
      if (args.iter & 1) {{ // v_j: its product is issued with the next key block's scores
        args.state.v = &args.input.t;
        if (args.iter == args.num_iters - 1) {{ // the last block's product
{last_early}          kittens::warpgroup::mma_AB(args.state.o, args.state.p, args.input.t, true);
          kittens::warpgroup::mma_async_wait<0>();
          if (kittens::laneid() == 0)
            kittens::arrive(args.inputs_finished);
        }}
        return;
      }}
      kittens::rt_fl<16, {BKV}> s;
      const int limit = static_cast<int>(args.globals.N - (long long)j * {BKV});
      const float c = args.globals.scale * 1.442695f;
      // The softmax of S_j (called in both branches below, so that no product is pending
      // across a join: ptxas would otherwise serialise every wgmma).
      auto softmax = [&]() {{
        row_vector t0;
        {{
          auto f = [&](const kittens::element &e) {{ return kittens::at(s, e); }};
          if (limit >= {BKV})
            kittens::row_reduce_elements<kittens::rt_fl<16, {BKV}>>(t0, kittens::base_ops::max{{}}, -INFINITY, f);
          else
            kittens::row_reduce_elements<kittens::rt_fl<16, {BKV}>>(t0, kittens::base_ops::max{{}}, -INFINITY, f, limit);
        }}
        row_vector m_new;
        kittens::apply(m_new, [&](const kittens::vector_element &e) {{
          return fmaxf(kittens::at(args.state.m, e), kittens::at(t0, e) * c);
        }});
        kittens::apply(s, [&](const kittens::element &e) {{
          return kittens::fast::exp2(kittens::at(s, e) * c - kittens::at(m_new, e));
        }});
        row_vector t1;
        {{
          auto f = [&](const kittens::element &e) {{ return kittens::at(s, e); }};
          if (limit >= {BKV})
            kittens::row_reduce_elements<kittens::rt_fl<16, {BKV}>>(t1, kittens::base_ops::add{{}}, 0.0f, f);
          else
            kittens::row_reduce_elements<kittens::rt_fl<16, {BKV}>>(t1, kittens::base_ops::add{{}}, 0.0f, f, limit);
        }}
        kittens::apply(args.state.r, [&](const kittens::vector_element &e) {{
          return kittens::fast::exp2(kittens::at(args.state.m, e) - kittens::at(m_new, e));
        }});
        kittens::apply(args.state.l, [&](const kittens::vector_element &e) {{
          return kittens::at(args.state.l, e) * kittens::at(args.state.r, e) + kittens::at(t1, e);
        }});
        kittens::apply(args.state.m, [&](const kittens::vector_element &e) {{ return kittens::at(m_new, e); }});
      }};
{turn_wait}      if (j == 0) {{
        kittens::warpgroup::mma_ABt(s, args.scratch.q[wg], args.input.t, false);
{turn_pass}        kittens::warpgroup::mma_async_wait<0>();
        if (kittens::laneid() == 0)
          kittens::arrive(args.inputs_finished); // done with k_j
        softmax();
      }} else {{
        kittens::warpgroup::mma_ABt(s, args.scratch.q[wg], args.input.t, false);
{early}        kittens::warpgroup::mma_AB(args.state.o, args.state.p, *args.state.v, true);
{turn_pass}        kittens::warpgroup::mma_async_wait<1>(); // S only
        if (kittens::laneid() == 0)
          kittens::arrive(args.inputs_finished); // done with k_j
        softmax();
        probe_pin(s); // the softmax before the product's wait, not after it
        probe_pin_rv(args.state.l);
        kittens::warpgroup::mma_async_wait<0>();
        probe_pin(args.state.o);
        if (kittens::laneid() == 0)
          kittens::arrive(*args.prev_inputs_finished); // done with v_(j-1)
      }}
{late}      kittens::copy(args.state.p, s);
      if (limit < {BKV})
        kittens::zero_columns_from(args.state.p, limit);
    }}
    __device__ static void finish(kittens::lcf::consumer_finish_args<{K}> &args) {{
      const int wg = kittens::warpgroupid();
      const int row = wg * 64 + kittens::warpgroup::warpid() * 16;
      if (!((long long)(args.common.i * 2 + wg) * 64 >= args.globals.N)) {{
        row_vector inv;
        kittens::apply(inv, [&](const kittens::vector_element &e) {{ return 1.0f / kittens::at(args.state.l, e); }});
        kittens::rt_fl<16, 128> out;
        kittens::apply(out, [&](const kittens::element &e) {{ return kittens::at(args.state.o, e) * kittens::at(inv, e); }});
        kittens::warpgroup::store(args.scratch.q[wg], out);
        kittens::fence_async_shared();
        kittens::warpgroup::sync(1 + wg);
        if (kittens::warpgroup::laneid() == 0) {{
          kittens::tma::store_async(args.globals.O, args.scratch.q[wg],
                                    {{args.common.b, args.common.h, args.common.i * 2 + wg, 0}});
          kittens::tma::store_commit_group();
          kittens::tma::store_async_read_wait<0>();
        }}
        kittens::warpgroup::sync(1 + wg);
        row_vector lse;
        kittens::apply(lse, [&](const kittens::vector_element &e) {{
          return (kittens::at(args.state.m, e) + kittens::fast::log2(kittens::at(args.state.l, e))) * 0.6931472f;
        }});
        float *base = args.globals.L + ((args.common.b) * args.globals.H + args.common.h) * (long long)args.globals.N;
        kittens::store_rows(base, lse, (long long)args.common.i * 128 + row, args.globals.N);
      }}
      if (kittens::laneid() == 0)
        kittens::arrive(args.finish_finished);
    }}
  }};
}};
"""
src = src[:a] + body + src[b:]
# The plan's checks describe the unedited kernel.
src = re.sub(r"static_assert\(\s*(sizeof\()?(kittens::lcf::traits<)?%s[^;]*;\n" % K, "", src)
old = "globals.j_count = static_cast<int>((N + 128 - 1) / 128);"
assert src.count(old) == 1
src = src.replace(old, "globals.j_count = static_cast<int>((N + %d - 1) / %d);" % (BKV, BKV))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from probe_pins import PINS as helpers
ns = src.index("namespace {")
src = src[:ns] + helpers + src[ns:]
open(path, "w").write(src)
