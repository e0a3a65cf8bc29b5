"""Probe edit (not shipped; bench/NOTES.md session 23): the paired order's arithmetic in 32 bits.
kittens::paired_task divides 64-bit values (pairs / blocks, pair / pairs_per_head), which the
compiler turns into a software routine, on every task boundary of the causal kernels; the
timelines put ~770 ns between a warpgroup's finish and its next task's top at causal D = 64,
N = 1024. The launcher refuses task counts past 2^31 - 1, so pairs fit in 32 bits; the lone
tasks' ordinal keeps 64 bits. Usage: python3 paired32.py X.cu"""
import sys
p = sys.argv[1]
s = open(p).read()
fn = r'''
__device__ __forceinline__ bool tkc_paired_task32(int task_iter, int blocks, int block, int heads, int count,
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
  if (it < 2 * full_rounds) {
    pair_task((it / 2) * blocks + block, it % 2);
    return true;
  }
  it -= 2 * full_rounds;
  if (block < left_over) {
    if (it < 2) {
      pair_task(full_rounds * blocks + block, it);
      return true;
    }
    it -= 2;
  }
  if (!odd) return false;
  const int rank = block >= left_over ? block - left_over : blocks - left_over + block;
  const long long lone = (long long)it * blocks + rank;
  if (lone >= heads) return false;
  head = static_cast<int>(lone);
  i = 0;
  return true;
}
'''
n = s.count("kittens::paired_task(")
assert n > 0, "no paired order here"
s = s.replace("kittens::paired_task(", "tkc_paired_task32(")
anchor = "namespace {\n"
assert anchor in s
s = s.replace(anchor, anchor + fn, 1)
open(p, "w").write(s)
print("paired32: %d calls" % n, file=sys.stderr)
