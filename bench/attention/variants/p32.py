# Variant: the paired order in 32-bit arithmetic (the launcher would bound heads * count).
import re, sys
p = sys.argv[1]; s = open(p).read()
fn = r'''
__device__ __forceinline__ bool tkc_paired32(int task_iter, int blocks, int block, int heads, int count,
                                             int &head, int &i) {
  const int pairs_per_head = count / 2, odd = count % 2;
  const int pairs = heads * pairs_per_head;
  const int full_rounds = pairs / blocks;
  const int left_over = pairs - full_rounds * blocks;
  auto pair_task = [&](int pair, int member) {
    head = pair / pairs_per_head;
    const int j = pair - head * pairs_per_head;
    i = member ? j + odd : count - 1 - j;
  };
  int it = task_iter;
  if (it < 2 * full_rounds) { pair_task((it / 2) * blocks + block, it % 2); return true; }
  it -= 2 * full_rounds;
  if (block < left_over) {
    if (it < 2) { pair_task(full_rounds * blocks + block, it); return true; }
    it -= 2;
  }
  if (!odd) return false;
  const int rank = block >= left_over ? block - left_over : blocks - left_over + block;
  const int lone = it * blocks + rank;
  if (lone >= heads) return false;
  head = lone; i = 0; return true;
}
'''
k = s.count("kittens::paired_task(")
s = s.replace("kittens::paired_task(", "tkc_paired32(")
idx = s.rfind("#include"); idx = s.index("\n", idx) + 1
s = s[:idx] + fn + s[idx:]
open(p, "w").write(s); print("p32", k, file=sys.stderr)
