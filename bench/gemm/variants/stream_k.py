"""Probe edit of a generated gemm.cu (bench/NOTES.md session 29): the last partial wave of tiles
shared out by k-steps (stream-K), so that every block does the same number of k-steps.

As emitted, T tiles on G persistent blocks give every block floor(T/G) or ceil(T/G) tiles: at
five of the six anchor shapes T/G is 3.88 (4096^3), 13.58 (4096 x 14336) or 15.52 (the other
three), so the launch lasts ceil(T/G) tiles while the blocks average T/G: ~3 % of the launch
idles. Here, when G < T and T % G = R != 0, each block first runs its floor(T/G) whole tiles
(the emitted order, unchanged), then its share of the R remaining tiles' R*k_count k-steps:
block b takes units [b*U/G, (b+1)*U/G) of U = R*k_count, in at most two parts (the tail of one
tile, the head of the next). A tile split across blocks is finished by the block that computes
its first k-step (its head part, that block's last part: it ends with the block's share, after
every other part of the tile): each other block writes its fp32 partial result (64 x 256 a
warpgroup, in register-fragment order, so that the owner's same thread reads the same values)
to a workspace and publishes it with a release store of the launch's epoch; the owner's
warpgroup acquires each flag, adds the partials, and stores the tile as a short task does.
Partial tasks are never split-finished. No GEMM shape is refused for it; one tile a block or
fewer, or a whole number of waves, runs as emitted.

The workspace (16.5 MiB at 132 blocks) and its flags are allocated once by the launcher for the
probe (one stream; not for shipping as is).

With `tail` (the second build), a block runs its part that ends inside its tile (a head) before
its other part, and the part that ends at its tile's last k-step (the tail) finishes the tile
instead: every block in its first part then reads k-step t of its tile at time t, and every
block in its second part k-step t + (k_count - share), so that blocks on neighbouring tiles load
the same operand slices together, as in the whole-tile waves (the first build, owner = head,
read 1.85x the DRAM bytes of the emitted kernel at 4096^3 and lost 10 %). The part that waits
still runs last in its block, and the blocks of the parts it waits for run those first.

    python3 stream_k.py GEMM_CU [tail]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

tail = len(sys.argv) > 2 and sys.argv[2] == "tail"
NEW_CS = """      const long long edge = (u0 / kc + 1) * kc; // the first tile edge past u0
      const bool two = edge < u1;                // a second part [edge, u1)
%s      if (part > 1 || (part == 1 && !two)) {
        args.num_iters = -1;
        return;
      }
      const long long s = nat == 0 ? u0 : edge;
      const long long e = nat == 0 ? (u1 < edge ? u1 : edge) : u1;
      const int sk = static_cast<int>(s / kc);
      const kittens::tile_mn tile = g.order.tile(g.m_count * g.n_count - g.sk_tiles + sk);
      args.common.m = tile.m;
      args.common.n = tile.n;
      args.common.k0 = static_cast<int>(s %% kc);
      args.common.role = %s;"""
NAT = """      // The second part runs first where it ends inside its tile (another block finishes that
      // tile): every block's first part then starts at its tile's first k-step. The part that
      // ends at its tile's end finishes the tile.
      const int nat = two && u1 != (edge / kc + 1) * kc ? 1 - part : part;
""" if tail else "      const int nat = part;\n"
ROLE = ("e == (s / kc + 1) * kc ? 1 : 2" if tail
        else "args.common.k0 == 0 ? 1 : 2")
LOOP = ("""        for (int b = blockIdx.x - 1; b >= 0 && (b + 1) * units / blocks > end - kc; --b) {""" if tail else
        """        for (int b = blockIdx.x + 1; b < gridDim.x && b * units / blocks < end; ++b) {""")
k = KernelPatch(sys.argv[1])
k.edit("""      kittens::grouped_tiles<8> order; // each task's tile
    };""", """      kittens::grouped_tiles<8> order; // each task's tile
      float *sk_partials;              // per block and warpgroup, 64 x 256 fp32, fragment order
      unsigned *sk_flags;              // per block and warpgroup: the epoch of its partial
      unsigned sk_epoch;               // this launch's
      int sk_whole;                    // whole tiles a block before its stream-K share
      int sk_tiles;                    // the last tiles shared out by k-steps (0: none)
    };""")
k.edit("""    struct common_state {
      int m;
      int n;
    };""", """    struct common_state {
      int m;
      int n;
      int k0;   // the part's first k-step
      int role; // 0 a whole tile, 1 a tile's head part (finishes it), 2 another part
      int sk;   // the tile's index among the shared tiles
    };""")
k.edit("""  __device__ static void common_setup(kittens::lcf::common_args<gemm_none_kernel> &args) {
    const int task = args.task_iter * gridDim.x + blockIdx.x;""", """  __device__ static void common_setup(kittens::lcf::common_args<gemm_none_kernel> &args) {
    const auto &g = args.globals;
    args.common.k0 = 0;
    args.common.role = 0;
    if (g.sk_tiles > 0 && args.task_iter >= g.sk_whole) {
      const int part = args.task_iter - g.sk_whole;
      const long long kc = g.k_count, units = (long long)g.sk_tiles * kc, blocks = gridDim.x;
      const long long u0 = blockIdx.x * units / blocks, u1 = (blockIdx.x + 1) * units / blocks;
""" + (NEW_CS % (NAT, ROLE)) + """
      args.common.sk = sk;
      args.num_iters = static_cast<int>(e - s);
      return;
    }
    const int task = args.task_iter * gridDim.x + blockIdx.x;""")
k.edit("""        const int tkc_k = kittens::alternating_iter(args.task_iter, args.num_iters, args.iter);""",
       """        const int tkc_k = args.common.role != 0
                              ? args.common.k0 + args.iter
                              : kittens::alternating_iter(args.task_iter, args.num_iters, args.iter);""")
k.edit("""      if (args.num_iters <= SPLIT_STAGES || args.iter < split) {""",
       """      if (args.num_iters <= SPLIT_STAGES || args.iter < split || args.common.role != 0) {""")
k.edit("""    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {
      // Split, compute stored the left half through the staging tile already.
      if (args.num_iters <= SPLIT_STAGES)""", """    // Thread t's partial of this warpgroup in block b: 32 float4 q, at ((b * 2 + wg) * 32 + q) * 128 + t.
    __device__ static float4 *partial_of(const layout::globals &g, int block, int wg) {
      return reinterpret_cast<float4 *>(g.sk_partials) + (size_t)(block * 2 + wg) * 32 * 128 +
             (threadIdx.x % 128);
    }
    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {
      const auto &g = args.globals;
      const int wg = kittens::warpgroupid();
      if (args.common.role == 2) { // another block finishes this tile: publish the partial
        float4 *p = partial_of(g, blockIdx.x, wg);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
              const float2 x = args.state.acc[h].tiles[0][j].data[2 * c];
              const float2 y = args.state.acc[h].tiles[0][j].data[2 * c + 1];
              __stcg(p + ((h * 8 + j) * 2 + c) * 128, make_float4(x.x, x.y, y.x, y.y));
            }
        __threadfence();
        kittens::warpgroup::sync(1 + wg);
        if (kittens::warpgroup::laneid() == 0)
          asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(g.sk_flags + blockIdx.x * 2 + wg),
                       "r"(g.sk_epoch)
                       : "memory");
        return;
      }
      if (args.common.role == 1) { // the tile's head: add the other parts, then store it
        const long long kc = g.k_count, units = (long long)g.sk_tiles * kc, blocks = gridDim.x;
        const long long end = (long long)(args.common.sk + 1) * kc;
""" + LOOP + """
          if (kittens::warpgroup::laneid() == 0) {
            unsigned seen;
            do {
              asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                           : "=r"(seen)
                           : "l"(g.sk_flags + b * 2 + wg)
                           : "memory");
            } while (seen != g.sk_epoch);
          }
          kittens::warpgroup::sync(1 + wg);
          const float4 *p = partial_of(g, b, wg);
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
              for (int c = 0; c < 2; ++c) {
                const float4 v = __ldcg(p + ((h * 8 + j) * 2 + c) * 128);
                float2 &x = args.state.acc[h].tiles[0][j].data[2 * c];
                float2 &y = args.state.acc[h].tiles[0][j].data[2 * c + 1];
                x.x += v.x;
                x.y += v.y;
                y.x += v.z;
                y.y += v.w;
              }
        }
      }
      // Split, compute stored the left half through the staging tile already.
      if (args.num_iters <= SPLIT_STAGES || args.common.role != 0)""")
k.edit_file("""  const long long tasks = (long long)globals.m_count * (long long)globals.n_count;
  if (tasks > 2147483647)
    return tkc::runtime::Status::error(std::string(kName) + ": " + std::to_string(tasks) +
                                       " output tiles are more than one launch can index");
  return launch_persistent<gemm_none_kernel>(globals, tasks, stream, kName);""", """  const long long tasks = (long long)globals.m_count * (long long)globals.n_count;
  if (tasks > 2147483647)
    return tkc::runtime::Status::error(std::string(kName) + ": " + std::to_string(tasks) +
                                       " output tiles are more than one launch can index");
  {
    // Stream-K probe: the workspace once, for this process's one stream.
    static float *partials = nullptr;
    static unsigned *flags = nullptr;
    static unsigned epoch = 0;
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (!partials) {
      cudaMalloc(&partials, (size_t)sms * 2 * 64 * 256 * 4);
      cudaMalloc(&flags, (size_t)sms * 2 * 4);
      cudaMemset(flags, 0, (size_t)sms * 2 * 4);
    }
    globals.sk_partials = partials;
    globals.sk_flags = flags;
    globals.sk_epoch = ++epoch;
    globals.sk_whole = static_cast<int>(tasks / sms);
    globals.sk_tiles = tasks > sms ? static_cast<int>(tasks % sms) : 0;
    if (globals.sk_tiles > 0 && (long long)globals.sk_tiles * globals.k_count < 4LL * sms)
      globals.sk_tiles = 0; // shares of fewer than 4 k-steps: whole tiles
  }
  return launch_persistent<gemm_none_kernel>(globals, tasks, stream, kName);""")
k.write()
print("gemm_none: stream-K over the last partial wave%s" % (", the tail finishes" if tail else ""))
