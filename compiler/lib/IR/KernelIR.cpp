//===- KernelIR.cpp - Printing and verifying kernel IR ---------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/IR/KernelIR.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace tkc::ir {

unsigned dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
    return 4;
  }
  return 0;
}

const char *cudaTypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "__nv_bfloat16";
  case DType::F16:
    return "__half";
  case DType::F32:
    return "float";
  }
  return "?";
}

namespace {

std::string coords(const std::vector<Coord> &list) {
  llvm::SmallVector<std::string, 4> parts;
  for (const Coord &c : list)
    parts.push_back(c.str());
  return "[" + llvm::join(parts, ", ") + "]";
}

std::string dims(const std::vector<Size> &list) {
  llvm::SmallVector<std::string, 4> parts;
  for (const Size &s : list)
    parts.push_back(s.str());
  return "[" + llvm::join(parts, ", ") + "]";
}

} // namespace

std::vector<std::string> launchSizeSymbols(const Kernel &kernel) {
  std::vector<std::string> out;
  llvm::StringSet<> seen;
  auto add = [&](const Size &size) {
    if (!size.constant && seen.insert(size.symbol).second)
      out.push_back(size.symbol);
  };
  for (const IterVar &v : kernel.tasks)
    add(v.size);
  add(kernel.loop.size);
  for (const Global &g : kernel.globals)
    for (const Size &d : g.dims)
      add(d);
  return out;
}

void printKernel(const Kernel &k, llvm::raw_ostream &os) {
  os << "kernel " << k.name << " (spec " << k.specName << ", arch " << (k.arch ? k.arch->name : "?")
     << ")\n";
  if (!k.params.empty()) {
    os << "  params";
    for (const auto &[name, value] : k.params)
      os << " " << name << "=" << value;
    os << "\n";
  }
  for (const Global &g : k.globals)
    os << "  global " << g.name << " " << spec::spelling(g.dtype) << dims(g.dims) << "\n";
  for (const IterVar &v : k.tasks)
    os << "  task " << v.name << " over " << v.size.str() << " step " << v.step << "\n";
  os << "  loop " << k.loop.name << " over " << k.loop.size.str() << " step " << k.loop.step
     << "\n";
  os << "  order " << (k.groupedOrder ? "grouped" : "linear") << "\n";
  os << "  consumer warpgroups " << k.consumerWarpgroups << "\n";
  for (const StageTile &t : k.stageTiles)
    os << "  stage tile " << t.name << " " << spec::spelling(t.dtype) << "[" << t.rows << ", "
       << t.cols << "] " << t.bytes() << " bytes\n";
  for (const Load &l : k.loads)
    os << "  load " << k.stageTiles[l.tile].name << " = " << k.globals[l.global].name
       << coords(l.coords) << " (tma, " << k.stageTiles[l.tile].bytes() << " bytes)\n";
  for (const State &s : k.state)
    os << "  state " << s.name << " " << spec::spelling(s.dtype) << "[" << s.rows << ", " << s.cols
       << "]\n";
  for (unsigned z : k.zeroInit)
    os << "  setup " << k.state[z].name << " = 0\n";
  for (const Mma &m : k.mmas)
    os << "  mma " << k.state[m.acc].name << " += " << k.stageTiles[m.a].name
       << (m.transposeA ? ".T" : "") << " @ " << k.stageTiles[m.b].name
       << (m.transposeB ? ".T" : "") << "\n";
  for (const EpilogueOp &e : k.epilogue) {
    os << "  epilogue " << k.state[e.state].name;
    switch (e.kind) {
    case EpilogueOp::Kind::AddRowVector:
      os << " += " << k.globals[*e.global].name << coords(e.coords) << " (row vector)\n";
      break;
    case EpilogueOp::Kind::AddTile:
      os << " += " << k.globals[*e.global].name << coords(e.coords) << " (tile)\n";
      break;
    case EpilogueOp::Kind::Gelu:
      os << " = gelu(" << k.state[e.state].name << ")\n";
      break;
    }
  }
  if (k.store)
    os << "  store " << k.globals[k.store->global].name << coords(k.store->coords) << " = "
       << k.state[k.store->state].name << " (tma)\n";
  const Plan &p = k.plan;
  if (p.stages)
    os << "  plan smem: stages=" << p.stages << " stage_bytes=" << p.stageBytes
       << " finish_bytes=" << p.finishBytes << " safe_stages=" << p.safeStages
       << " dynamic_bytes=" << p.dynamicSharedBytes << "\n";
  if (p.consumerRegisters)
    os << "  plan registers: producer=" << p.producerRegisters
       << " consumer=" << p.consumerRegisters << " accumulator=" << p.accumulatorRegisters << "\n";
  if (p.producerArrivals) {
    os << "  plan sync: producer_arrivals=" << p.producerArrivals
       << " consumer_arrivals=" << p.consumerArrivals << " expect_bytes=" << p.expectBytes
       << " finish_barriers=[";
    llvm::interleave(p.finishBarrierIds, os, ", ");
    os << "] group_rows=" << p.groupRows << "\n";
  }
}

void verifyKernel(const Kernel &k) {
  TKC_INTERNAL_ASSERT(k.arch, "kernel without an arch");
  TKC_INTERNAL_ASSERT(!k.tasks.empty(), "kernel without tasks");
  TKC_INTERNAL_ASSERT(k.consumerWarpgroups >= 1 && k.consumerWarpgroups <= 3,
                      "consumer warpgroups out of range");
  for (const Load &l : k.loads) {
    TKC_INTERNAL_ASSERT(l.tile < k.stageTiles.size() && l.global < k.globals.size(),
                        "load refers to a missing tile or global");
    TKC_INTERNAL_ASSERT(l.coords.size() == k.globals[l.global].dims.size(),
                        "load coordinates do not match the global's rank");
  }
  for (const Mma &m : k.mmas)
    TKC_INTERNAL_ASSERT(m.acc < k.state.size() && m.a < k.stageTiles.size() &&
                            m.b < k.stageTiles.size(),
                        "mma refers to missing operands");
  TKC_INTERNAL_ASSERT(k.store.has_value(), "kernel without a store");
  TKC_INTERNAL_ASSERT(k.store->coords.size() == k.globals[k.store->global].dims.size(),
                      "store coordinates do not match the global's rank");
  for (const EpilogueOp &e : k.epilogue)
    TKC_INTERNAL_ASSERT(e.state < k.state.size() && (e.kind == EpilogueOp::Kind::Gelu ||
                                                     (e.global && *e.global < k.globals.size())),
                        "epilogue refers to missing operands");
  const Plan &p = k.plan;
  if (p.stages) {
    TKC_INTERNAL_ASSERT(p.stages >= 1 && p.stages <= 16, "stage count out of range");
    TKC_INTERNAL_ASSERT(p.safeStages >= 1 && p.safeStages <= p.stages,
                        "no stage lies before the finish block");
  }
  if (p.producerArrivals) {
    int bytes = 0;
    for (const Load &l : k.loads)
      bytes += static_cast<int>(k.stageTiles[l.tile].bytes());
    TKC_INTERNAL_ASSERT(p.expectBytes == bytes,
                        "the bytes armed per stage differ from the bytes loaded");
    TKC_INTERNAL_ASSERT(static_cast<int>(p.finishBarrierIds.size()) == k.consumerWarpgroups,
                        "one finish barrier per consumer warpgroup");
  }
}

} // namespace tkc::ir
