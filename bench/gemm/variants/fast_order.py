"""Probe edit (not shipped; bench/NOTES.md session 24): gemm_none's grouped order without
run-time divisions. Shipped, common_setup calls kittens::grouped_order, which divides the task
ordinal by 8 * n_count and the remainder by the rows of its group (8 except in a partial last
group): two divisions by counts known only at run time, on the producer's way to its first copy
and on every task boundary of the consumers. Here the launcher builds a kittens::fast_div for
8 * n_count, and a whole group divides by its 8 rows with a mask and a shift.

    python3 fast_order.py gemm.cu

Applies to gemm.cu as tkc emitted it up to d8da638; shipped since as kittens::grouped_tiles.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

patch = KernelPatch(sys.argv[1])
edit = patch.edit

edit("""      int k_count; // pipeline stages per task (K / 64)
""", """      int k_count; // pipeline stages per task (K / 64)
      kittens::fast_div group_div; // 8 * n_count: tasks a group of 8 tile rows
""")
edit("""    const kittens::tile_mn tile =
        kittens::grouped_order(task, args.globals.m_count, args.globals.n_count, 8);
    args.common.m = tile.m;
    args.common.n = tile.n;
""", """    const int group = args.globals.group_div.div(task);
    const int in_group = task - group * args.globals.group_div.d;
    const int first_m = group * 8;
    const int rows_here = args.globals.m_count - first_m;
    if (rows_here >= 8) {
      args.common.m = first_m + (in_group & 7);
      args.common.n = in_group >> 3;
    } else {
      args.common.m = first_m + in_group % rows_here;
      args.common.n = in_group / rows_here;
    }
""")
old = """  globals.k_count = static_cast<int>((K + 64 - 1) / 64);
  const long long tasks = (long long)globals.m_count * (long long)globals.n_count;
  if (tasks > 2147483647)
    return tkc::runtime::Status::error(std::string(kName) + ": " + std::to_string(tasks) +
                                       " output tiles are more than one launch can index");
  return launch_persistent<gemm_none_kernel>"""
patch.edit_file(old, old.replace("  return launch_persistent", """  if (8LL * globals.n_count > 2147483647)
    return tkc::runtime::Status::error(std::string(kName) + ": N too large");
  globals.group_div = kittens::fast_div(8 * globals.n_count);
  return launch_persistent"""))
patch.write()
print("gemm_none: grouped order through fast_div")
