//===- Arch.h - What each GPU architecture offers ---------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The table of GPU architectures tkc knows: their limits (shared memory,
/// registers) and features (wgmma, TMA, setmaxnreg). Passes read budgets and
/// legality from here, never from numbers typed elsewhere.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tkc {

/// Numbers the passes tune by, measured on a GPU of the architecture (an H100 for
/// sm_90a; the bench notes record the evidence). The emitter reads none of them:
/// passes turn them into the plan.
struct Tuning {
  /// Causal tasks (a loop that stops at the task's rows, starting at 0) take the head-major
  /// order (a head's tasks together, the stopping index fastest) up to this many tasks a
  /// head, in kernels whose ring has at most `headMajorMaxStages` stages: a deeper ring has
  /// enough loads in flight to hide memory latency (D = 128 and 256 at 3-16 tasks a head:
  /// 1.13-1.56x; 0.57-0.83x at 43 or more; with five stages at most +1.5 %).
  int headMajorMaxCount;
  int headMajorMaxStages;
  /// The paired order (a head's task i with its task count - 1 - i) up to this many tasks a
  /// head; with a ring of at most `headMajorMaxStages` stages only from
  /// `pairedMinCountShallowRing` tasks and with at least `pairedShallowRingMinWarpgroups`
  /// consumer warpgroups (D = 64: 1.02-1.09x at 3-16 tasks; D = 128 0.77x at 3 tasks,
  /// 0.99-1.08x at 6-16; two warpgroups 0.97x).
  int pairedMaxCount;
  int pairedMinCountShallowRing;
  int pairedShallowRingMinWarpgroups;
  /// Tasks whose loop over its whole size starts at their rows (the causal attention
  /// backward: the first of a head are the longest) keep the rotated order up to this many
  /// tasks a head and come longest first above: at N = 8192 and 16384 (64 and 128 tasks a
  /// head) longest first ran the causal backward at 0.79-0.84x cuDNN against 0.55-0.71x
  /// rotated, at N = 1024-4096 (8-32) at 0.58-0.74x against 0.79-0.94x.
  int startRotatedMaxCount;
  /// Those tasks in pairs (kittens::paired_task: task i with count - 1 - i, about one
  /// length together) from startPairedMinCount to startPairedMaxCount a head: a head's
  /// pairs run on neighbouring blocks, so the blocks' work evens out and the running tasks
  /// share a head's operands in L2 (the causal backward at 16 and 32 tasks a head, H200:
  /// D128 1.00-1.02x cuDNN against 0.91-0.96x rotated; at 8 rotated stays, 1.11x against
  /// 1.08x at D = 64).
  int startPairedMinCount;
  int startPairedMaxCount;
  /// Causal kernels with at least this many consumer warpgroups take a task's row blocks in
  /// turn (1.01-1.02x at N <= 2048 with three; 0.99x at N >= 8192 with two).
  int rotateRowBlocksMinWarpgroups;
  /// `x = x * r` (r a row vector) on a tile of at least this many f32 registers a thread is
  /// skipped in a warp whose factors are all 1 (attention's rescale: +2-5 % at 64 registers,
  /// +1-2 % at 128, 1-2 % slower at 32).
  int skipUnitFactorRegisters;
  /// Registers a consumer program needs beside the values live at its busiest op
  /// (peakLiveRegisters): addresses, indices and loop state. At setmaxnreg 160 attention
  /// programs with 140 live compile without spills in every variant tried; at 142 some
  /// spill (soft-capping at D = 128, the 192-key tile at D = 64) and others do not: 140 is
  /// the most accepted.
  int programRegisterOverhead;
  /// And beside a result kept in column parts (split-finish), whose left half's store runs
  /// while the right half's products are in flight: a 192 x 256 result over three consumer
  /// warpgroups (128 registers) spilled 12 bytes at setmaxnreg 160 with 28 in all.
  int splitResultRegisterOverhead;
};

struct ArchInfo {
  /// The spelling in specs and on the command line (e.g. "sm_90a").
  llvm::StringRef name;
  /// nvcc's -gencode argument for it.
  llvm::StringRef nvccGencode;
  /// Largest dynamic shared memory one block may opt in to, in bytes.
  unsigned maxSharedBytesPerBlock;
  /// 32-bit registers per multiprocessor.
  unsigned registersPerSM;
  bool hasWgmma;
  bool hasTma;
  bool hasSetmaxnreg;
  Tuning tuning;
};

/// Every architecture tkc knows, in table order. What a kernel may do on one
/// is decided by its features: the lowering reports each one a spec needs and
/// the arch lacks.
llvm::ArrayRef<ArchInfo> getKnownArchs();

/// The entry named `name`, or nullptr.
const ArchInfo *lookupArch(llvm::StringRef name);

/// The architecture to compile `spec` for: `override` (from --arch) when
/// given, else the spec's `arch`, else the default (sm_90a). Reports a
/// located error and returns nullptr for an unknown arch.
const ArchInfo *resolveArch(const spec::KernelSpec &spec, std::optional<llvm::StringRef> override,
                            DiagnosticEngine &diags);

/// The names of the known architectures, comma-separated.
std::string knownArchList();

/// The names of the known architectures that have every feature `has` asks
/// for, comma-separated (for "use sm_90a" hints).
std::string archListWith(bool (*has)(const ArchInfo &));

} // namespace tkc
