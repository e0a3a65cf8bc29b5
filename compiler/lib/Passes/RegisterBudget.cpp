//===- RegisterBudget.cpp - Producer/consumer register split ---------------===//
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

bool planProgramRegisters(ir::Kernel &kernel, DiagnosticEngine &diags, int consumerThreads) {
  ir::Plan &plan = kernel.plan;
  const ir::Program &program = kernel.program;
  // State lives all task long; of the temporaries only the largest tile is
  // counted (the others die before it, or are as large): an estimate that
  // ptxas's spill report, checked in CI, confirms.
  int state = 0, largestTemp = 0;
  const ir::RegValue *biggestState = nullptr;
  for (const ir::RegValue &v : program.values) {
    int regs = ir::valueRegisters(v, kernel.consumerWarpgroups);
    if (v.state) {
      state += regs;
      if (!biggestState || regs > ir::valueRegisters(*biggestState, kernel.consumerWarpgroups))
        biggestState = &v;
    } else {
      largestTemp = std::max(largestTemp, regs);
    }
  }
  plan.accumulatorRegisters = state + largestTemp;
  // ptxas allocates the code after setmaxnreg.inc within the raised limit (a
  // 384-thread kernel with ~200 live values compiles without spills after
  // setmaxnreg.inc 240, and spills at 168): the consumers' share is the budget.
  const int threads = consumerThreads + ir::kWarpgroupThreads;
  const Tuning &tuning = kernel.arch->tuning;
  const int overhead =
      tuning.programRegisterOverhead + (plan.resultParts ? tuning.splitResultRegisterOverhead : 0);
  if (plan.accumulatorRegisters + overhead > plan.consumerRegisters) {
    SourceLoc where = biggestState ? biggestState->loc : program.values.front().loc;
    diags.report(DiagID::err_register_budget_live, where, plan.accumulatorRegisters, overhead,
                 plan.consumerRegisters, threads);
    const ir::RegValue *largest = nullptr;
    for (const ir::RegValue &v : program.values) {
      if (v.state)
        diags.report(DiagID::note_register_value, v.loc, v.name,
                     ir::valueRegisters(v, kernel.consumerWarpgroups), "state, live all task long");
      else if (!largest || ir::valueRegisters(v, kernel.consumerWarpgroups) >
                               ir::valueRegisters(*largest, kernel.consumerWarpgroups))
        largest = &v;
    }
    if (largest)
      diags.report(DiagID::note_register_value, largest->loc, largest->name,
                   ir::valueRegisters(*largest, kernel.consumerWarpgroups),
                   "the largest temporary; a smaller tile along its columns shrinks it");
    return false;
  }
  return true;
}

} // namespace

bool planRegisters(ir::Kernel &kernel, DiagnosticEngine &diags) {
  ir::Plan &plan = kernel.plan;
  const int consumerThreads = kernel.consumerWarpgroups * ir::kWarpgroupThreads;
  // Three consumer warpgroups leave 160 registers a thread only if the
  // producer, which just issues copies, drops to the minimum.
  plan.producerRegisters =
      kernel.consumerWarpgroups >= 3 ? kMinProducerRegisters : kProducerRegisters;
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
  return planProgramRegisters(kernel, diags, consumerThreads);
}

} // namespace tkc
