"""Probe edit (not shipped; bench/NOTES.md session 24): a swizzled tile one chunk wide (64 bf16
columns: the GEMM's A tile, attention's 64-wide tiles) always moves through the 4-D map of the
ragged path, chosen at compile time. Shipped, every tile_map copy reads `chunk_copies` from the
kernel's parameters and branches between the 5-D whole-tile form and the per-chunk form; for a
one-chunk tile both are one copy of the same bytes. Here such a tile's map is always the 4-D one
and its copies take no branch; wider tiles keep the choice, with the whole-tile form marked
likely. Copies kittens to DEST and patches it there.

    python3 one_chunk_maps.py KITTENS_INCLUDE DEST
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

ops = LcfPatch(sys.argv[2], copy_from=sys.argv[1], header="kittens/ops/global/tma_sm90.cuh")
ops.edit('''  } else if (m.chunk_copies == 0) {
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"''',
         '''  } else if constexpr (ST::cols == ST::chunk_cols) {
    // One chunk: the map is always the 4-D one (see make_tile_map), and one copy moves it.
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\\n" ::"r"(smem_addr(&dst)), "l"(detail::map_ptr(&m.map)),
                 "r"(e.c), "r"(e.r), "r"(e.d), "r"(e.b), "r"(smem_addr(&bar)) : "memory");
  } else if (m.chunk_copies == 0) [[likely]] {
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"''')
for op in ("tile.bulk_group", "add.tile.bulk_group"):
    inst = "cp.async.bulk.tensor" if op == "tile.bulk_group" else "cp.reduce.async.bulk.tensor"
    ops.edit('''  } else if (m.chunk_copies == 0) {
    asm volatile("%s.5d.global.shared::cta.%s [%%0, {%%2, %%3, %%4, %%5, %%6}], [%%1];\\n"''' % (inst, op),
             '''  } else if constexpr (ST::cols == ST::chunk_cols) {
    asm volatile("%s.4d.global.shared::cta.%s [%%0, {%%2, %%3, %%4, %%5}], [%%1];\\n"
                 ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(t.c * ST::cols), "r"(t.r * ST::rows),
                 "r"(t.d), "r"(t.b) : "memory");
  } else if (m.chunk_copies == 0) [[likely]] {
    asm volatile("%s.5d.global.shared::cta.%s [%%0, {%%2, %%3, %%4, %%5, %%6}], [%%1];\\n"''' % (inst, op, inst, op))
ops.write()
maps = LcfPatch(sys.argv[2], header="kittens/types/global/tma_map.cuh")
maps.edit("  } else if (g.cols() % ST::chunk_cols == 0) {",
          "  } else if (ST::cols != ST::chunk_cols && g.cols() % ST::chunk_cols == 0) {")
maps.write()
