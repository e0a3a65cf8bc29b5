"""Probe edit (not shipped; bench/attention/overlap/probe.py): D = 128 non-causal compute with the next score product
overlapping the previous block's P·V (FlashAttention-3's intra-warpgroup overlap).
Every iteration issues S_j = q k_j^T and then o += P_{j-1} v_{j-1} (P zero at j = 0),
waits for S_j only, runs the softmax, then waits for the product, releases stage j-1 and
rescales o; finish issues the last block's product first. OV_KERNEL names the kernel
(attention_fwd_D128_kernel by default, or attention_fwd_D64_kernel); OV_TURNS=1 makes two
warpgroups issue their products in turn (named barriers 5 and 6). For N a multiple of the
task's rows only: a warpgroup with no rows would never take its turn."""
import sys
path = sys.argv[1]
src = open(path).read()
import os
K = os.environ.get("OV_KERNEL", "attention_fwd_D128_kernel")
OT = "kittens::rt_fl<16, 64>" if "D64" in K else "kittens::rt_fl<16, 128>"
a = src.index("struct %s {" % K)
b = src.index("\n};\n", a)
body = src[a:b]
def sub(old, new):
    global body
    assert body.count(old) == 1, old
    body = body.replace(old, new)
sub("""      %s o;
      row_vector m;
      row_vector l;
    };""" % OT, """      %s o;
      row_vector m;
      row_vector l;
      kittens::rt_bf<16, 128> p_prev; // the previous block's P, its product not yet issued
      const v_tile *v_prev;
      kittens::semaphore *stage_prev; // its stage, released once that product is done
    };""" % OT)
sub("""      kittens::apply(args.state.o, [&](const kittens::element &tkc_e) { return 0.0f; });""",
    """      kittens::apply(args.state.o, [&](const kittens::element &tkc_e) { return 0.0f; });
      kittens::zero(args.state.p_prev);
      args.state.stage_prev = nullptr;""")
TURNS = os.environ.get("OV_TURNS") == "1"
if TURNS:
    sub("""      kittens::zero(args.state.p_prev);
      args.state.stage_prev = nullptr;""", """      kittens::zero(args.state.p_prev);
      args.state.stage_prev = nullptr;
      if (args.task_iter == 0 && kittens::warpgroupid() == 1)
        kittens::named_arrive(5, 256); // warpgroup 0 issues first""")
c0 = body.index("      kittens::warpgroup::mma_ABt(s, ")
c1 = body.index("      kittens::warpgroup::mma_async_wait<0>();", c0)
c1e = c1 + len("      kittens::warpgroup::mma_async_wait<0>();")
body = body[:c1] + """      kittens::warpgroup::mma_AB(args.state.o, args.state.p_prev,
                                 args.iter > 0 ? *args.state.v_prev : args.input.v, true);
      kittens::warpgroup::mma_async_wait<1>(); // S only""" + body[c1e:]
if TURNS:
    body = body[:c0] + """      kittens::named_sync(5 + tkc_wg, 256); // this warpgroup's turn to issue
""" + body[c0:]
    sub("""      kittens::warpgroup::mma_async_wait<1>(); // S only""", """      kittens::named_arrive(6 - tkc_wg, 256); // the other warpgroup's turn
      kittens::warpgroup::mma_async_wait<1>(); // S only""")
RESCALE = ("      // A factor of 1 in every row of this warp leaves 'o' as it is" if "D64" not in K else
           "      kittens::apply(args.state.o, [&](const kittens::element &tkc_e) {\n        return (kittens::at(args.state.o, tkc_e) * kittens::at(r8, tkc_e));")
sub(RESCALE, """      probe_pin(p); // the softmax before the product's wait, not after it
      probe_pin_rv(args.state.l);
      kittens::warpgroup::mma_async_wait<0>();
      probe_pin(args.state.o); // o read only after the wait
      if (args.iter > 0 && kittens::laneid() == 0)
        kittens::arrive(*args.prev_inputs_finished); // done with the previous stage's v
""" + RESCALE)
p0 = body.index("      // 'p' as the bf16 register operand of the product")
tail = "      if (kittens::laneid() == 0)\n        kittens::arrive(args.inputs_finished); // this warp is done with the stage\n    }"
p1 = body.index(tail, p0) + len(tail)
body = body[:p0] + """      kittens::copy(args.state.p_prev, p);
      if (static_cast<int>(args.globals.N - (long long)args.iter * 128) < 128)
        kittens::zero_columns_from(args.state.p_prev,
                                   static_cast<int>(args.globals.N - (long long)args.iter * 128));
      args.state.v_prev = &args.input.v;
      args.state.stage_prev = &args.inputs_finished;
      kittens::apply(args.state.m, [&](const kittens::vector_element &tkc_e) {
        return kittens::at(m_new, tkc_e);
      });
    }""" + body[p1:]
sub("""    finish(kittens::lcf::consumer_finish_args<%s> &args) {
""" % K, """    finish(kittens::lcf::consumer_finish_args<%s> &args) {
      if (args.state.stage_prev != nullptr) { // the last block's product
        kittens::warpgroup::mma_AB(args.state.o, args.state.p_prev, *args.state.v_prev, true);
        kittens::warpgroup::mma_async_wait<0>();
        if (kittens::laneid() == 0)
          kittens::arrive(*args.state.stage_prev);
        args.state.stage_prev = nullptr;
      }
""" % K)
src = src[:a] + body + src[b:]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from probe_pins import PINS as helpers
ns = src.index("namespace {")
src = src[:ns] + helpers + src[ns:]
open(path, "w").write(src)
