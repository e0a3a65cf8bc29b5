//===- RegisterLiveness.cpp - The registers a consumer program keeps live --===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A task runs setup once, compute once per stage and finish once. Walking that
// sequence backwards (compute twice, so that what one stage leaves for the next
// is live across the loop) gives, before and after each op, the values still
// to be read. An op's registers are those values plus what it needs itself:
//
//   - an elementwise statement or a row reduction works element by element, so
//     an operand that dies there gives its registers to the result as it goes:
//     the larger of what is live before and what is live after;
//   - a product needs its accumulator and register operand at once, and a bf16
//     copy of an f32 operand that outlives it (the copy is the operand itself
//     where fuse-elementwise wrote it directly; an f32 operand that dies there is
//     converted into its copy in its own registers); a product with a shadow keeps
//     its result and those copies until its wait, after the shadow's ops (the
//     f32 tile a copy was made from may die at the issue);
//   - a staged (transposed) operand is stored from its bf16 copy; a product
//     whose operand an earlier product copied (ir::operandCopySource) reads
//     that copy, held from the product that made it, not the f32 tile;
//   - a store or a global added reads its values and makes none;
//   - a statement fused with the row sum after it (fuse-elementwise) that nothing
//     reads past the sum is never whole: it costs nothing.
//
// State is live everywhere. A value that fuse-elementwise writes as the bf16
// operand exists in bf16 only, so it holds half an f32 tile's registers.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include <algorithm>
#include <set>

namespace tkc {

namespace {
struct Step {
  const ir::ProgramOp *op;
  ir::Body body;
  size_t index; ///< in its body
};

bool definesValue(const ir::ProgramOp &op) {
  return op.kind == ir::ProgramOp::Kind::Assign || op.kind == ir::ProgramOp::Kind::RowReduce ||
         op.kind == ir::ProgramOp::Kind::Mma;
}
} // namespace

RegisterPeak peakLiveRegisters(const ir::Kernel &kernel) {
  const ir::Program &program = kernel.program;
  const size_t nValues = program.values.size();

  // What each value costs; bf16 where it exists only as a product's operand.
  std::vector<int> cost(nValues);
  for (size_t v = 0; v < nValues; ++v)
    cost[v] = ir::valueRegisters(program.values[v], kernel.consumerWarpgroups);
  std::vector<bool> operandOnly(nValues, false);
  ir::forEachOp(program, [&](ir::Body, const ir::ProgramOp &op) {
    if (op.kind == ir::ProgramOp::Kind::Assign && op.writesOperand)
      operandOnly[op.dst] = true;
  });
  for (size_t v = 0; v < nValues; ++v)
    if (operandOnly[v])
      cost[v] /= 2;
  auto bf16Copy = [&](unsigned v) { return operandOnly[v] ? 0 : cost[v] / 2; };

  std::vector<Step> steps;
  auto append = [&](ir::Body body) {
    const std::vector<ir::ProgramOp> &ops = program.body(body);
    for (size_t i = 0; i < ops.size(); ++i)
      steps.push_back({&ops[i], body, i});
  };
  append(ir::Body::Setup);
  append(ir::Body::Compute);
  append(ir::Body::Compute);
  append(ir::Body::Finish);
  const size_t n = steps.size();

  // Reads at each step; a product's operands are read again where its shadow ends,
  // and its bf16 copy of an f32 operand is held through the shadow. A product that reads
  // the copy an earlier product made of its operand (ir::operandCopySource) reads that
  // copy, held from the product that made it, instead of the f32 tile.
  std::vector<std::vector<unsigned>> reads(n);
  std::vector<std::set<unsigned>> heldCopies(n);
  std::vector<bool> copiedBefore(n, false);
  for (size_t s = 0; s < n; ++s) {
    const ir::ProgramOp &op = *steps[s].op;
    const std::vector<ir::ProgramOp> &body = program.body(steps[s].body);
    std::optional<size_t> source = ir::operandCopySource(kernel, body, steps[s].index);
    copiedBefore[s] = source.has_value();
    for (unsigned v : ir::valuesRead(op))
      if (!(source && v == op.a.index))
        reads[s].push_back(v);
    if (source)
      for (size_t t = s - (steps[s].index - *source) + 1; t <= s; ++t)
        heldCopies[t].insert(op.a.index);
    if (op.kind != ir::ProgramOp::Kind::Mma || !op.shadow)
      continue;
    std::vector<unsigned> operands{op.dst};
    std::vector<unsigned> copies;
    // An operand written only as the bf16 operand is itself held; another is held as
    // its bf16 copy, and its f32 tile may die at the issue.
    for (const ir::MmaOperand *o : {&op.a, &op.b})
      if (o->where == ir::MmaOperand::Where::Register && !o->transposed) {
        if (operandOnly[o->index])
          operands.push_back(o->index);
        else
          copies.push_back(o->index);
      }
    const size_t end = std::min(n - 1, s + op.shadow); // the wait
    for (unsigned v : operands)
      reads[end].push_back(v);
    for (size_t t = s + 1; t <= end; ++t)
      heldCopies[t].insert(copies.begin(), copies.end());
  }
  std::vector<int> held(n, 0);
  for (size_t s = 0; s < n; ++s)
    for (unsigned v : heldCopies[s])
      held[s] += bf16Copy(v);

  // Backwards: live[s] = the temporaries live after step s.
  std::vector<std::vector<bool>> liveAfter(n, std::vector<bool>(nValues, false));
  std::vector<bool> live(nValues, false);
  for (size_t s = n; s-- > 0;) {
    liveAfter[s] = live;
    const ir::ProgramOp &op = *steps[s].op;
    if (definesValue(op))
      live[op.dst] = false;
    for (unsigned v : reads[s])
      live[v] = true;
  }

  // A number read per task (TaskRead) holds one register; a stage tile read as numbers,
  // its warp's 16 rows in 16-bit registers all compute long (kept beside the state); a
  // global read per column, the lane's quarter of the stage's columns (f32, or 16-bit pairs),
  // from compute's first op that reads it to its last.
  int state = static_cast<int>(kernel.taskReads.size());
  std::vector<std::vector<unsigned>> columnReadsHeld(n);
  std::vector<int> columnRegisters(n, 0);
  for (unsigned r = 0; r < kernel.columnReads.size(); ++r) {
    auto span = ir::columnReadSpan(kernel, r);
    for (size_t s = 0; s < n && span; ++s)
      if (steps[s].body == ir::Body::Compute && steps[s].index >= span->first &&
          steps[s].index <= span->last) {
        columnRegisters[s] += ir::columnReadRegisters(kernel, kernel.columnReads[r]);
        columnReadsHeld[s].push_back(r);
      }
  }
  for (unsigned tile : ir::stageTilesRead(program))
    state += ir::stageReadRegisters(kernel.stageTiles[tile]);
  for (size_t v = 0; v < nValues; ++v)
    if (program.values[v].state)
      state += cost[v];
  auto sum = [&](const std::vector<bool> &set, std::vector<unsigned> *out) {
    int total = 0;
    for (size_t v = 0; v < nValues; ++v)
      if (set[v] && !program.values[v].state) {
        total += cost[v];
        if (out)
          out->push_back(static_cast<unsigned>(v));
      }
    return total;
  };

  // A statement fused with the row sum after it, which nothing reads past the sum, is
  // summed element by element as it is made: it never exists as a whole tile.
  std::vector<bool> transient(n, false);
  for (size_t s = 0; s + 1 < n; ++s) {
    const ir::ProgramOp &op = *steps[s].op;
    transient[s] =
        op.kind == ir::ProgramOp::Kind::Assign && op.fusedRowSum && !liveAfter[s + 1][op.dst];
  }

  RegisterPeak peak;
  peak.state = state;
  for (size_t s = 0; s < n; ++s) {
    const ir::ProgramOp &op = *steps[s].op;
    std::vector<bool> before = s ? liveAfter[s - 1] : std::vector<bool>(nValues, false);
    std::vector<bool> after = liveAfter[s];
    if (op.kind == ir::ProgramOp::Kind::Mma)
      after[op.dst] = true; // written, even where nothing reads it (a dead statement is not)
    if (transient[s])
      after[op.dst] = false;
    if (s && transient[s - 1])
      before[steps[s - 1].op->dst] = false;
    int regs = 0, copies = held[s];
    std::vector<bool> *at = &after;
    std::vector<bool> both(nValues);
    switch (op.kind) {
    case ir::ProgramOp::Kind::Assign:
    case ir::ProgramOp::Kind::RowReduce:
      if (sum(before, nullptr) > sum(after, nullptr))
        at = &before;
      regs = sum(*at, nullptr);
      break;
    case ir::ProgramOp::Kind::Mma:
      for (size_t v = 0; v < nValues; ++v)
        both[v] = before[v] || after[v];
      at = &both;
      regs = sum(both, nullptr);
      // The copy made here beside an f32 operand that outlives the product. One whose f32
      // tile dies here while its copy is held for a later product is converted into the copy
      // pair by pair: the tile's registers, already counted, hold it.
      for (const ir::MmaOperand *o : {&op.a, &op.b})
        if (o->where == ir::MmaOperand::Where::Register && !(o == &op.a && copiedBefore[s]) &&
            after[o->index])
          copies += bf16Copy(o->index);
      break;
    default:
      for (size_t v = 0; v < nValues; ++v)
        both[v] = before[v] || after[v];
      at = &both;
      regs = sum(both, nullptr);
      break;
    }
    regs += copies + columnRegisters[s];
    if (regs + state > peak.registers || !peak.op) {
      peak.registers = regs + state;
      peak.op = &op;
      peak.body = steps[s].body;
      peak.live.clear();
      sum(*at, &peak.live);
      peak.held = copies;
      peak.columnReads = columnReadsHeld[s];
    }
  }
  for (size_t v = 0; v < nValues; ++v)
    peak.cost.push_back(cost[v]);
  return peak;
}

} // namespace tkc
