//===- RegisterBudget.cpp - Register split and the live-register check -----===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include <algorithm>

namespace tkc {

namespace {
/// The producer only issues TMA copies: 40 registers per thread suffice.
constexpr int kProducerRegisters = 40;
/// setmaxnreg accepts at most 256 registers per thread.
constexpr int kMaxRegisters = 256;
constexpr int kMinProducerRegisters = 24;

} // namespace

bool planRegisters(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Plan &plan = kernel.plan;
  const int consumerThreads = kernel.consumerWarpgroups * ir::kWarpgroupThreads;
  // Three consumer warpgroups leave 160 registers a thread only if the
  // producer, which just issues copies, drops to the minimum. So does a program
  // that stages a register operand (the attention backward): its warpgroups meet
  // between products, hold the products' operands and copies through the
  // meeting, and with 232 registers ptxas spilled the ALiBi backward at D = 64
  // where tkc counted 193 live; with 240 none spills.
  plan.producerRegisters = kernel.consumerWarpgroups >= 3 || !kernel.operandStagings.empty()
                               ? kMinProducerRegisters
                               : kProducerRegisters;
  // setmaxnreg shares out the registers the block was launched with, which
  // ptxas makes the most its launch bounds allow, a multiple of 8 a thread
  // (168 at 384 threads): not the whole register file. (kittens'
  // block_register_pool is the same arithmetic.)
  const int threads = consumerThreads + ir::kWarpgroupThreads;
  const int launchRegisters =
      std::min(static_cast<int>(kernel.arch->registersPerSM) / threads / 8 * 8, kMaxRegisters);
  int available = (launchRegisters * threads - plan.producerRegisters * ir::kWarpgroupThreads) /
                  consumerThreads / 8 * 8;
  plan.consumerRegisters = std::min(available, kMaxRegisters);
  return true;
}

int registerOverhead(const ir::Kernel &kernel) {
  const Tuning &tuning = kernel.arch->tuning;
  return tuning.programRegisterOverhead +
         (kernel.plan.resultParts ? tuning.splitResultRegisterOverhead : 0);
}

bool fitsRegisters(const ir::Kernel &kernel) {
  return peakLiveRegisters(kernel).registers + registerOverhead(kernel) <=
         kernel.plan.consumerRegisters;
}

bool placeColumnReads(ir::Kernel &kernel, DiagnosticEngine &) {
  if (kernel.columnReads.empty() || fitsRegisters(kernel))
    return true;
  for (unsigned r = 0; r < kernel.columnReads.size(); ++r)
    if (auto readers = ir::columnReadReaders(kernel.program, r))
      kernel.columnReads[r].inPlace = readers->first == readers->last;
  return true;
}

bool checkRegisters(ir::Kernel &kernel, DiagnosticEngine &diags) {
  ir::Plan &plan = kernel.plan;
  const ir::Program &program = kernel.program;
  RegisterPeak peak = peakLiveRegisters(kernel);
  if (!peak.op)
    return true;
  plan.liveRegisters = peak.registers;
  // ptxas allocates the code after setmaxnreg.inc within the raised limit (a
  // 384-thread kernel with ~200 live values compiles without spills after
  // setmaxnreg.inc 240, and spills at 168): the consumers' share is the budget.
  const int overhead = registerOverhead(kernel);
  if (peak.registers + overhead <= plan.consumerRegisters)
    return true;
  const int threads = (kernel.consumerWarpgroups + 1) * ir::kWarpgroupThreads;
  diags.report(DiagID::err_register_budget_live, peak.op->loc, ir::spelling(peak.body),
               peak.registers, overhead, plan.consumerRegisters, threads);
  // The values live there, largest first; state in the order declared.
  std::vector<unsigned> temps = peak.live;
  std::stable_sort(temps.begin(), temps.end(),
                   [&](unsigned a, unsigned b) { return peak.cost[a] > peak.cost[b]; });
  for (size_t v = 0; v < program.values.size(); ++v)
    if (program.values[v].state)
      diags.report(DiagID::note_register_value, program.values[v].loc, program.values[v].name,
                   peak.cost[v], "state, live all task long");
  for (unsigned tile : ir::stageTilesRead(program)) {
    const ir::StageTile &t = kernel.stageTiles[tile];
    diags.report(DiagID::note_register_value, t.loc, t.name, ir::stageReadRegisters(t),
                 "this warp's rows of each stage, live all compute long");
  }
  for (unsigned r : peak.columnReads) {
    const ir::ColumnRead &read = kernel.columnReads[r];
    diags.report(DiagID::note_register_value, read.loc, read.text,
                 ir::columnReadRegisters(kernel, read),
                 "this lane's columns of the stage, live from compute's first read of it to "
                 "its last");
  }
  for (unsigned v : temps)
    diags.report(DiagID::note_register_value, program.values[v].loc, program.values[v].name,
                 peak.cost[v], "a temporary still to be read there");
  if (peak.held)
    diags.report(DiagID::note_register_copies, peak.op->loc, peak.held);
  return false;
}

} // namespace tkc
