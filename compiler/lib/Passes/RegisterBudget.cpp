//===- RegisterBudget.cpp - Producer/consumer register split ---------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

namespace tkc {

namespace {
/// The producer only issues TMA copies: 40 registers per thread suffice.
constexpr int kProducerRegisters = 40;
/// setmaxnreg accepts at most 256 registers per thread.
constexpr int kMaxRegisters = 256;
/// Registers a consumer thread needs beside its accumulator: addresses,
/// loop state and the epilogue's temporaries.
constexpr int kConsumerOverhead = 64;
constexpr int kWarpgroupThreads = 128;
} // namespace

bool planRegisters(ir::Kernel &kernel, DiagnosticEngine &diags) {
  ir::Plan &plan = kernel.plan;
  const int consumerThreads = kernel.consumerWarpgroups * kWarpgroupThreads;
  plan.producerRegisters = kProducerRegisters;
  int available =
      (static_cast<int>(kernel.arch->registersPerSM) - kProducerRegisters * kWarpgroupThreads) /
      consumerThreads / 8 * 8;
  plan.consumerRegisters = std::min(available, kMaxRegisters);

  plan.accumulatorRegisters = 0;
  for (const ir::State &state : kernel.state) {
    int perThread =
        static_cast<int>(state.rows * state.cols *
                         static_cast<int64_t>(ir::dtypeBytes(state.dtype)) / 4 / consumerThreads);
    plan.accumulatorRegisters += perThread;
    if (plan.accumulatorRegisters + kConsumerOverhead > plan.consumerRegisters) {
      diags.report(DiagID::err_register_budget, state.loc, state.name, perThread,
                   kernel.consumerWarpgroups, plan.consumerRegisters - kConsumerOverhead,
                   kConsumerOverhead);
      return false;
    }
  }
  return true;
}

} // namespace tkc
