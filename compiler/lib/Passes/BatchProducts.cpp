//===- BatchProducts.cpp - Products in flight together ----------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A product is waited for right after its issue unless it belongs to a batch:
// a product followed, before the first op that needs it, by another product,
// or a product issued while one of a batch is in flight. A product of a batch
// stays in flight up to the first op that needs it (ir::needsProduct: reads or
// writes its result, or writes a register operand it reads), or to the end of
// compute; the ops before that run while it computes (its `shadow`). The
// tensor cores then take the products back to back, and the elementwise work
// between them runs under them:
//
//   SwiGLU    gate += a @ b1; up += a @ b2              one wait for both
//   backward  st = k @ q.T; dpt = v @ do.T; <pt>; <dst>;
//             dv += pt @ do; t0 = dst.T @ k; dk += dst @ q; dQ += t0
//             pt computed while dpt runs; dk runs under dQ's store
//
// First, a compute store of a product's result moves below the products that
// follow it and do not make what it stores (the backward's dQ store below dk's
// product), unless the registers would then not hold the program.
// A product alone (attention's forward `s = q @ k.T`) keeps its wait, and so
// does one with a shadow overlap-row-sums chose. A product in flight holds its
// result and its register operands' bf16 copies until its wait: where that
// would exceed the consumers' registers, fewer products are left in flight
// (the most that fit, the earliest kept first).
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tkc {

namespace {
/// A product into a result kept in parts (split-finish) is issued part by part.
bool inParts(const ir::Kernel &kernel, const ir::ProgramOp &op) {
  return op.kind == ir::ProgramOp::Kind::Mma && kernel.plan.resultParts &&
         op.dst == kernel.plan.resultValue;
}

/// Ops that may run while a product is in flight.
bool mayRunUnder(const ir::Kernel &kernel, const ir::ProgramOp &op) {
  switch (op.kind) {
  case ir::ProgramOp::Kind::Assign:
  case ir::ProgramOp::Kind::RowReduce:
  case ir::ProgramOp::Kind::StoreTile:
    return true;
  case ir::ProgramOp::Kind::Mma:
    return !inParts(kernel, op);
  default:
    return false;
  }
}

/// The index of the first op after product `i` that must wait for it (ops.size() for
/// none): never between a statement and the row sum computed with it.
size_t firstNeed(const ir::Kernel &kernel, const std::vector<ir::ProgramOp> &ops, size_t i) {
  size_t j = i + 1;
  while (j < ops.size() && mayRunUnder(kernel, ops[j]) && !ir::needsProduct(ops[j], ops[i]))
    ++j;
  if (j < ops.size() && j > i + 1 && ops[j - 1].fusedRowSum)
    --j;
  return j;
}

/// Whether compute store `ops[i]` stores a product's result: the last op before it that
/// writes the value it stores is a product.
bool storesProduct(const std::vector<ir::ProgramOp> &ops, size_t i) {
  if (ops[i].expr.kind != ir::Elementwise::Kind::Value)
    return false;
  for (size_t j = i; j-- > 0;)
    if (ir::writesValue(ops[j], ops[i].expr.value))
      return ops[j].kind == ir::ProgramOp::Kind::Mma;
  return false;
}

/// Moves each compute store of a product's result below the products that follow it and
/// do not write what it reads: they are issued before the wait the store needs, and run
/// while it is staged (the backward's dQ store under dK's product). Returns whether
/// anything moved.
bool sinkStores(const ir::Kernel &kernel, std::vector<ir::ProgramOp> &ops) {
  bool moved = false;
  for (size_t i = ops.size(); i-- > 0;) {
    if (ops[i].kind != ir::ProgramOp::Kind::StoreTile || !storesProduct(ops, i))
      continue;
    for (size_t j = i; j + 1 < ops.size(); ++j) {
      const ir::ProgramOp &next = ops[j + 1];
      if (next.kind != ir::ProgramOp::Kind::Mma || inParts(kernel, next) ||
          llvm::is_contained(ir::valuesRead(ops[j]), next.dst))
        break;
      std::swap(ops[j], ops[j + 1]);
      moved = true;
    }
  }
  return moved;
}

/// Leaves the products of `kernel`'s compute in flight as described above; false where the
/// registers do not hold the program even with every product waited for at once.
bool batch(ir::Kernel &kernel) {
  std::vector<ir::ProgramOp> &ops = kernel.program.compute;
  auto isProduct = [&](size_t i) { return ops[i].kind == ir::ProgramOp::Kind::Mma; };

  // Candidates: products without a shadow, in a batch.
  std::vector<size_t> batch;
  std::vector<size_t> need(ops.size(), 0);
  size_t openUntil = 0; // a product of a batch is in flight before this op
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!isProduct(i) || ops[i].shadow || inParts(kernel, ops[i]))
      continue;
    need[i] = firstNeed(kernel, ops, i);
    bool another = false;
    for (size_t j = i + 1; j < need[i] && !another; ++j)
      another = isProduct(j);
    if (!another && i >= openUntil)
      continue;
    batch.push_back(i);
    openUntil = std::max(openUntil, need[i]);
  }
  if (batch.empty())
    return fitsRegisters(kernel);

  // The most products of the batch left in flight that the registers allow; among as many,
  // the earliest first (their shadows are the longest).
  const size_t n = batch.size();
  auto apply = [&](size_t mask) {
    for (size_t b = 0; b < n; ++b)
      ops[batch[b]].shadow =
          ((mask >> b) & 1) ? static_cast<unsigned>(need[batch[b]] - batch[b] - 1) : 0;
    // A wait retires every product issued before the one it waits for: a product's shadow
    // ends at the first wait of a product issued under it.
    for (size_t i = ops.size(); i-- > 0;) {
      if (!isProduct(i))
        continue;
      for (size_t j = i + 1; j <= i + ops[i].shadow; ++j)
        if (isProduct(j))
          ops[i].shadow =
              std::min<unsigned>(ops[i].shadow, static_cast<unsigned>(j + ops[j].shadow - i));
    }
  };
  std::vector<size_t> masks; // beyond 10 products: all or none
  for (size_t mask = 0; n <= 10 && mask < (size_t(1) << n); ++mask)
    masks.push_back(mask);
  if (n > 10)
    masks = {~size_t(0)};
  std::stable_sort(masks.begin(), masks.end(), [](size_t a, size_t b) {
    int ca = __builtin_popcountll(a), cb = __builtin_popcountll(b);
    if (ca != cb)
      return ca > cb;
    // Lower bits are earlier products: prefer the mask whose lowest differing bit is set.
    size_t diff = a ^ b;
    return (a & diff & (~diff + 1)) != 0;
  });
  for (size_t mask : masks) {
    apply(mask);
    if (fitsRegisters(kernel))
      return true;
  }
  apply(0);
  return false;
}
} // namespace

bool batchProducts(ir::Kernel &kernel, DiagnosticEngine &) {
  // Stores sunk below the products after them, unless that leaves more live than the
  // registers hold; then the program's order, batched as it can be (check-registers
  // reports a program that does not fit either way).
  std::vector<ir::ProgramOp> original = kernel.program.compute;
  if (sinkStores(kernel, kernel.program.compute) && batch(kernel))
    return true;
  kernel.program.compute = std::move(original);
  batch(kernel);
  return true;
}

} // namespace tkc
