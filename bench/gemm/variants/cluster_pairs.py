"""Probe edit (not shipped; bench/NOTES.md session 26): the generated gemm_none in 2-block
clusters that share the B tile through TMA multicast, on the shipped LCF template with its four
stages and the finish blocks that alias the fourth (L7 had three stages and a finish of its own,
L8 a finish staged in 8 KiB pieces; neither kept the shipped finish).

The two blocks of a cluster take vertically adjacent tiles (rows 2p and 2p + 1 of a pair-row p,
same columns): each block's producer loads its own A tile and one 64 x 128 half of the B tile,
multicast into both blocks, so a block reads 32 KiB a stage from L2 instead of 48. Both blocks'
consumers release every stage and every finish block on both blocks' semaphores (16 arrivals
where there were 8), since either producer writes into both. The blocks meet (cluster barrier)
after the semaphores are initialised and before they exit. Pairs follow the grouped order over
pair-rows with groups of 4 pair-rows (8 tile rows, as shipped). For shapes whose M is a
multiple of 256 and N of 64 (the anchor shapes), K >= 256 (every task waits for the previous
finish, which keeps the two blocks within a task of each other).

    python3 cluster_pairs.py KITTENS_INCLUDE DEST GEMM_CU     (patches DEST's LCF and GEMM_CU)
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)
from lcf_patch import LcfPatch  # noqa: E402
from kernel_patch import KernelPatch  # noqa: E402

lcf = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
lcf.edit("""KITTENS_LCF_INT_OR(RING_START, 0)
""", """KITTENS_LCF_INT_OR(RING_START, 0)
KITTENS_LCF_INT_OR(CLUSTER, 1)
""")
lcf.edit("""  static constexpr int RING_START = detail::RING_START_of<K>::value;
""", """  static constexpr int RING_START = detail::RING_START_of<K>::value;
  /// Blocks a cluster (1 or 2): both blocks' consumers release both blocks' stages.
  static constexpr int CLUSTER = detail::CLUSTER_of<K>::value;
""")
lcf.edit("""struct empty {};
""", """struct empty {};

KITTENS_DEVICE void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\\nbarrier.cluster.wait.acquire;\\n" ::: "memory");
}
/// Arrive `count` times on the semaphore at the same offset in block `cta` of the cluster.
KITTENS_DEVICE void arrive_remote(semaphore &s, uint32_t cta, uint32_t count = 1) {
  asm volatile("{\\n .reg .b32 remote;\\n mapa.shared::cluster.u32 remote, %0, %1;\\n"
               " mbarrier.arrive.shared::cluster.b64 _, [remote], %2;\\n}\\n"
               ::"r"(smem_addr(&s)), "r"(cta), "r"(count) : "memory");
}
""")
lcf.edit("""      init_semaphore(inputs_finished[s], TR::CONSUMER_ARRIVALS);
    }
    init_semaphore(finish_finished, TR::CONSUMER_ARRIVALS);""", """      init_semaphore(inputs_finished[s], TR::CONSUMER_ARRIVALS * TR::CLUSTER);
    }
    init_semaphore(finish_finished, TR::CONSUMER_ARRIVALS * TR::CLUSTER);""")
lcf.edit("""    fence_semaphore_init();
  }
  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""", """    fence_semaphore_init();
  }
  if constexpr (TR::CLUSTER > 1) cluster_sync_all(); // no remote arrival or multicast before the peer's semaphores exist
  else named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""")
lcf.edit("""    release_finish(); // the block's last store must have read the finish block before it exits
  }
}
""", """    release_finish(); // the block's last store must have read the finish block before it exits
  }
  if constexpr (TR::CLUSTER > 1) cluster_sync_all(); // the peer may still arrive here
}
""")
lcf.edit("""  kernel<K><<<grid, TR::NUM_THREADS, TR::DYNAMIC_SHARED_BYTES, stream>>>(g);
  return cudaGetLastError();""", """  if constexpr (TR::CLUSTER > 1) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(TR::NUM_THREADS);
    cfg.dynamicSmemBytes = TR::DYNAMIC_SHARED_BYTES;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = TR::CLUSTER;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel<K>, g);
  } else {
    kernel<K><<<grid, TR::NUM_THREADS, TR::DYNAMIC_SHARED_BYTES, stream>>>(g);
    return cudaGetLastError();
  }""")
lcf.write()

k = KernelPatch(sys.argv[3])
k.edit("""  using b_tile = kittens::st_bf<64, 256>;
""", """  using b_tile = kittens::st_bf<64, 256>;
  using b_half = kittens::st_bf<64, 128>; // what each block of a cluster loads for both
""")
k.edit("""      kittens::tile_map<b_tile> B;""", """      kittens::tile_map<b_half> B;""")
k.edit("""      kittens::grouped_tiles<8> order; // each task's tile""",
       """      kittens::grouped_tiles<4> order; // each pair's tiles (pair-rows x n)""")
k.edit("""  static constexpr bool FINISH_PER_WARPGROUP = true;
""", """  static constexpr bool FINISH_PER_WARPGROUP = true;
  static constexpr int CLUSTER = 2;
""")
k.replace_between("""    const int task = args.task_iter * gridDim.x + blockIdx.x;""", """    args.num_iters = args.globals.k_count;""",
                  """    const int pair = args.task_iter * (gridDim.x / 2) + blockIdx.x / 2;
    if (pair >= ((args.globals.m_count + 1) / 2) * args.globals.n_count) {
      args.num_iters = -1; // no pair left for this cluster
      return;
    }
    const kittens::tile_mn tile = args.globals.order.tile(pair);
    args.common.m = 2 * tile.m + int(blockIdx.x & 1);
    args.common.n = tile.n;
""")
k.edit("""        kittens::tma::load_async(args.input.b, args.globals.B, {0, 0, args.iter, args.common.n},
                                 args.inputs_arrived);""", """        const int rank = int(blockIdx.x & 1);
        int c[5];
        kittens::tma::detail::tile_coords<b_half>({0, 0, args.iter, 2 * args.common.n + rank}, c);
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;\\n"
                     ::"r"(kittens::smem_addr(&args.input.b) + uint32_t(rank * sizeof(b_half))),
                       "l"(reinterpret_cast<uint64_t>(&args.globals.B.map)), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                       "r"(c[3]), "r"(c[4]), "r"(kittens::smem_addr(&args.inputs_arrived)), "h"(uint16_t(3))
                     : "memory");""")
k.edit("""        kittens::arrive(args.inputs_finished); // this warp is done with the stage""",
       """      {
        kittens::arrive(args.inputs_finished); // this warp is done with the stage
        kittens::lcf::arrive_remote(args.inputs_finished, (blockIdx.x & 1) ^ 1);
      }""")
k.edit("""        kittens::arrive(args.finish_finished,
                        kittens::WARPGROUP_WARPS); // the finish block may be reused""",
       """        kittens::arrive(args.finish_finished,
                        kittens::WARPGROUP_WARPS); // the finish block may be reused
        kittens::lcf::arrive_remote(args.finish_finished, (blockIdx.x & 1) ^ 1, kittens::WARPGROUP_WARPS);""")
# The launcher: B's map moves halves; pairs in grouped order; an even grid of at most the
# clusters that fit at once.
k.edit_file("""    globals.B = kittens::make_tile_map<gemm_none_kernel::b_tile>(""",
            """    globals.B = kittens::make_tile_map<gemm_none_kernel::b_half>(""")
k.edit_file("""  globals.order = kittens::grouped_tiles<8>(globals.m_count, globals.n_count);
  globals.k_count = static_cast<int>((K + 64 - 1) / 64);
  const long long tasks = (long long)globals.m_count * (long long)globals.n_count;
  if (tasks > 2147483647)
    return tkc::runtime::Status::error(std::string(kName) + ": " + std::to_string(tasks) +
                                       " output tiles are more than one launch can index");
  return launch_persistent<gemm_none_kernel>(globals, tasks, stream, kName);""",
            """  globals.order = kittens::grouped_tiles<4>((globals.m_count + 1) / 2, globals.n_count);
  globals.k_count = static_cast<int>((K + 64 - 1) / 64);
  if (M % 256 != 0 || N % 64 != 0 || K < 256)
    return tkc::runtime::Status::error(std::string(kName) + ": the cluster probe needs M % 256 == 0, N % 64 == 0, K >= 256");
  const long long pairs = (long long)((globals.m_count + 1) / 2) * (long long)globals.n_count;
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int clusters = static_cast<int>(pairs < sms / 2 ? pairs : sms / 2);
  cudaError_t e = kittens::lcf::launch<gemm_none_kernel>(globals, 2 * clusters, stream);
  if (e != cudaSuccess)
    return tkc::runtime::Status::error(std::string(kName) + ": launch failed: " + cudaGetErrorString(e));
  return tkc::runtime::Status::success();""")
k.write()
print("gemm_none: 2-block clusters, B multicast, 4 stages with the aliased finish")
