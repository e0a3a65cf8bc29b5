//===- SmemBudget.cpp - Stage sizing and the shared-memory budget ----------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tkc {

namespace {

constexpr int kAlign = 1024;
/// Bytes the lcf template keeps out of the budget: 1024 of alignment slack
/// for the dynamic allocation and room for its semaphores.
constexpr int kReservedBytes = 2048;
constexpr int kMaxStages = 16;

int padded(int64_t bytes) { return static_cast<int>((bytes + kAlign - 1) / kAlign * kAlign); }

/// The layout the lcf template derives: stages from offset 0, the finish
/// block as late as the budget allows (it may alias the last stages).
struct Layout {
  int stagesEnd, finishOffset, safeStages, dynamicBytes;
};

Layout layoutFor(int stages, int stageBytes, int finishBytes, int scratchBytes, int budget) {
  Layout l;
  l.stagesEnd = scratchBytes + stages * stageBytes;
  l.finishOffset = finishBytes ? (budget - finishBytes) / kAlign * kAlign : budget;
  l.safeStages = 0;
  while (l.safeStages < stages && scratchBytes + (l.safeStages + 1) * stageBytes <= l.finishOffset)
    ++l.safeStages;
  l.dynamicBytes = std::max(l.stagesEnd, l.finishOffset + finishBytes) + kAlign;
  return l;
}

} // namespace

bool planSharedMemory(ir::Kernel &kernel, DiagnosticEngine &diags) {
  ir::Plan &plan = kernel.plan;
  int64_t loaded = 0;
  for (const ir::Load &load : kernel.loads)
    loaded += padded(kernel.stageTiles[load.tile].bytes());
  // The columns read per column follow the tiles in the stage (the producer copies them).
  for (const ir::ColumnRead &read : kernel.columnReads)
    loaded += ir::columnReadStageBytes(kernel, read);
  plan.stageBytes = padded(loaded);
  // Per-warpgroup tiles live outside the ring, one copy per warpgroup (two
  // when setup loads the next task's while this task runs; decided below).
  int warpgroupTileBytes = 0;
  for (const ir::WarpgroupTile &tile : kernel.warpgroupTiles)
    warpgroupTileBytes += padded(tile.bytes() * kernel.consumerWarpgroups);
  // A store in compute stages each stage's result in a tile of its own, one copy.
  int stagingBytes = 0;
  for (const ir::StagingTile &tile : kernel.stagingTiles)
    stagingBytes += padded(tile.bytes() * kernel.consumerWarpgroups);
  // A transposed register operand is staged once per ring slot (OperandStaging), so that a
  // stage writes where no warpgroup still reads: its bytes grow with the stages.
  plan.operandStagingBytes = 0;
  for (const ir::OperandStaging &tile : kernel.operandStagings)
    plan.operandStagingBytes += padded(tile.bytes() * kernel.consumerWarpgroups);
  plan.setupBuffers = 1;
  plan.scratchBytes = padded(warpgroupTileBytes) + stagingBytes;
  // The finish stages a stored tile in bf16 for the TMA store, unless a
  // per-warpgroup tile of its shape can hold it.
  plan.finishBytes = 0;
  std::string finishWhat;
  SourceLoc finishLoc;
  for (const ir::ProgramOp &op : kernel.program.finish)
    if (op.kind == ir::ProgramOp::Kind::StoreTile && op.tile >= kernel.warpgroupTiles.size()) {
      // A result kept in column parts (split-finish) is staged one part at a time.
      const bool inParts = plan.resultParts > 1 && op.expr.isValue(plan.resultValue);
      const int parts = inParts ? plan.resultParts : 1;
      plan.finishBytes =
          std::max(plan.finishBytes, padded(64 * kernel.consumerWarpgroups * op.cols / parts *
                                            ir::dtypeBytes(kernel.globals[op.global].dtype)));
      finishWhat = "finish staging of the store to " + kernel.globals[op.global].name +
                   (inParts ? ", one column half at a time" : "");
      finishLoc = op.loc;
    }
  auto noteScratch = [&] {
    for (const ir::WarpgroupTile &tile : kernel.warpgroupTiles)
      diags.report(DiagID::note_smem_buffer, tile.loc, tile.name,
                   padded(tile.bytes() * kernel.consumerWarpgroups),
                   fmt::format("one copy for each of {} warpgroups", kernel.consumerWarpgroups));
    for (const ir::ProgramOp &op : kernel.program.compute)
      if (op.kind == ir::ProgramOp::Kind::StoreTile)
        diags.report(DiagID::note_smem_buffer, op.loc,
                     "staging of the store to " + kernel.globals[op.global].name + " every stage",
                     padded(kernel.stagingTiles[op.tile].bytes() * kernel.consumerWarpgroups),
                     fmt::format("one copy for each of {} warpgroups", kernel.consumerWarpgroups));
  };
  auto noteOperands = [&](int stages) {
    for (const ir::ProgramOp &op : kernel.program.compute)
      if (op.kind == ir::ProgramOp::Kind::Mma && op.a.where == ir::MmaOperand::Where::Register &&
          op.a.transposed)
        diags.report(DiagID::note_smem_buffer, op.loc,
                     "staging of '" + kernel.program.values[op.a.index].name + "' for the product",
                     int64_t{stages} * padded(kernel.operandStagings[op.a.staging].bytes() *
                                              kernel.consumerWarpgroups),
                     fmt::format("one copy for each of {} warpgroups and {} stages",
                                 kernel.consumerWarpgroups, stages));
  };
  auto noteFinish = [&](const char *how) {
    if (plan.finishBytes)
      diags.report(DiagID::note_smem_buffer, finishLoc, finishWhat, plan.finishBytes, how);
  };

  int budget = static_cast<int>(kernel.arch->maxSharedBytesPerBlock) - kReservedBytes;
  auto scratchFor = [&](int stages) {
    return plan.scratchBytes + stages * plan.operandStagingBytes;
  };
  auto fits = [&](int stages) {
    Layout l = layoutFor(stages, plan.stageBytes, plan.finishBytes, scratchFor(stages), budget);
    return l.stagesEnd <= budget && l.safeStages >= 1;
  };

  // Setup loads into per-warpgroup tiles wait at the start of every task. A
  // second copy of those tiles lets each task's setup load the next task's
  // instead, hidden behind this task's stages: worth it when the ring keeps
  // the stages asked for, or at least two under `auto`.
  bool setupLoads = llvm::any_of(kernel.program.setup, [](const auto &op) {
    return op.kind == ir::ProgramOp::Kind::LoadTile;
  });
  if (setupLoads) {
    int single = plan.scratchBytes;
    plan.scratchBytes = padded(2 * warpgroupTileBytes) + stagingBytes;
    bool fitsTwo = kernel.requestedStages && !kernel.requestedStages->isAuto
                       ? fits(static_cast<int>(kernel.requestedStages->count))
                       : fits(2);
    if (fitsTwo)
      plan.setupBuffers = 2;
    else
      plan.scratchBytes = single;
  }

  int stages = 0;
  if (kernel.requestedStages && !kernel.requestedStages->isAuto) {
    stages = static_cast<int>(kernel.requestedStages->count);
    if (stages > kMaxStages || !fits(stages)) {
      SourceLoc loc = kernel.requestedStages->loc;
      int64_t needed =
          scratchFor(stages) + std::max<int64_t>(int64_t{stages} * plan.stageBytes,
                                                 int64_t{plan.stageBytes} + plan.finishBytes);
      diags.report(DiagID::err_smem_budget, loc, needed, budget, kernel.arch->name.str());
      for (const ir::Load &load : kernel.loads) {
        const ir::StageTile &tile = kernel.stageTiles[load.tile];
        diags.report(DiagID::note_smem_buffer, tile.loc, tile.name,
                     int64_t{stages} * padded(tile.bytes()),
                     fmt::format("{} stages of {} bytes", stages, padded(tile.bytes())));
      }
      noteScratch();
      noteOperands(stages);
      noteFinish("may alias the last stages");
      return false;
    }
  } else {
    for (int s = kMaxStages; s >= 1 && !stages; --s)
      if (fits(s))
        stages = s;
    if (!stages) {
      SourceLoc loc = kernel.loads.empty() ? finishLoc : kernel.loads.front().loc;
      diags.report(DiagID::err_smem_budget, loc,
                   int64_t{scratchFor(1)} + plan.stageBytes + plan.finishBytes, budget,
                   kernel.arch->name.str());
      for (const ir::Load &load : kernel.loads) {
        const ir::StageTile &tile = kernel.stageTiles[load.tile];
        diags.report(DiagID::note_smem_buffer, tile.loc, tile.name, padded(tile.bytes()),
                     "one stage");
      }
      noteScratch();
      noteOperands(1);
      noteFinish("at least one stage must lie before it");
      return false;
    }
  }
  plan.scratchBytes = scratchFor(stages);
  Layout l = layoutFor(stages, plan.stageBytes, plan.finishBytes, plan.scratchBytes, budget);
  plan.stages = stages;
  // The split stages are held to the task's end, so the ring must have room for them; and the
  // first split stage's call (which computes them all) stages the left half in the finish block
  // while the right half's products still read stages, so that block must lie past every stage
  // (else the finish stores both halves in turn, after the consumers have met).
  plan.splitStages = l.safeStages < stages ? 0 : std::min(plan.splitStages, stages);
  plan.safeStages = l.safeStages;
  plan.dynamicSharedBytes = l.dynamicBytes;
  return true;
}

} // namespace tkc
