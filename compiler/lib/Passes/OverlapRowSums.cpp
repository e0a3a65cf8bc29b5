//===- OverlapRowSums.cpp - Row sums under the product they do not feed ----===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// In attention's compute, `l = l * r + rowsum(p)` needs p but nothing the
// product `o += p @ v` makes, and the product needs nothing it makes: the sum
// can run while the product is in flight, between its issue and its wait,
// instead of before the issue. That pays where the product outlasts the sum
// (D = 256 on an H100: +3.5 to +8 %) and costs where it does
// not (D = 64, 128 keys: 1 to 4 % slower), and it keeps p alive beside the
// product's bf16 copy of it, which D = 128 cannot afford (ptxas spills). So:
// only a product with at least twice the reduced columns, and only when the
// live registers still fit.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <algorithm>

namespace tkc {

namespace {
using ValueSet = llvm::SmallSet<unsigned, 8>;

ValueSet reads(const ir::ProgramOp &op) {
  ValueSet out;
  for (unsigned v : ir::valuesRead(op))
    out.insert(v);
  return out;
}

bool writes(const ir::ProgramOp &op, unsigned value) { return ir::writesValue(op, value); }

bool intersects(const ValueSet &a, const ValueSet &b) {
  return llvm::any_of(a, [&](unsigned v) { return b.count(v) != 0; });
}

/// Whether `late` (an Assign or a RowReduce) may run after `passed` instead of
/// before it: neither reads what the other writes, and they write different values.
bool commutes(const ir::ProgramOp &late, const ir::ProgramOp &passed) {
  if (reads(passed).count(late.dst) || writes(passed, late.dst))
    return false;
  ValueSet lateReads = reads(late);
  return !llvm::any_of(lateReads, [&](unsigned v) { return writes(passed, v); });
}
} // namespace

bool overlapRowSums(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Program &program = kernel.program;
  std::vector<ir::ProgramOp> &ops = program.compute;
  auto product = std::find_if(ops.begin(), ops.end(), [](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::Mma && op.a.where == ir::MmaOperand::Where::Register &&
           !op.a.transposed;
  });
  if (product == ops.end())
    return true;
  const size_t at = static_cast<size_t>(product - ops.begin());
  const int64_t productCols = program.values[product->dst].cols;

  // The sums before the product, each with the ops before the product that
  // read what it makes; all must commute with the ops they pass.
  std::vector<bool> moving(ops.size(), false);
  for (size_t i = 0; i < at; ++i) {
    const ir::ProgramOp &sum = ops[i];
    if (sum.kind != ir::ProgramOp::Kind::RowReduce || sum.reduce != ir::Reduce::Sum ||
        productCols < 2 * sum.cols)
      continue;
    std::vector<size_t> group{i};
    ValueSet made;
    made.insert(sum.dst);
    for (size_t j = i + 1; j < at; ++j)
      if (!moving[j] && intersects(reads(ops[j]), made)) {
        group.push_back(j);
        if (ops[j].kind == ir::ProgramOp::Kind::Assign)
          made.insert(ops[j].dst);
      }
    bool ok = true;
    for (size_t g : group) {
      if (ops[g].kind != ir::ProgramOp::Kind::Assign &&
          ops[g].kind != ir::ProgramOp::Kind::RowReduce)
        ok = false;
      for (size_t j = g + 1; ok && j <= at; ++j)
        if (!llvm::is_contained(group, j) && !moving[j] && !commutes(ops[g], ops[j]))
          ok = false;
    }
    if (!ok)
      continue;
    for (size_t g : group)
      moving[g] = true;
  }
  if (llvm::none_of(moving, [](bool m) { return m; }))
    return true;

  // Kept only where the registers live under the product (its operand, in f32 and as the
  // product's bf16 copy, beside the state) still fit.
  std::vector<ir::ProgramOp> original = ops;
  std::vector<ir::ProgramOp> before, under, after;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i < at)
      (moving[i] ? under : before).push_back(std::move(ops[i]));
    else if (i > at)
      after.push_back(std::move(ops[i]));
  }
  ir::ProgramOp mma = std::move(ops[at]);
  mma.shadow = static_cast<unsigned>(under.size());
  ops = std::move(before);
  ops.push_back(std::move(mma));
  std::move(under.begin(), under.end(), std::back_inserter(ops));
  std::move(after.begin(), after.end(), std::back_inserter(ops));
  if (!fitsRegisters(kernel))
    ops = std::move(original);
  return true;
}

} // namespace tkc
