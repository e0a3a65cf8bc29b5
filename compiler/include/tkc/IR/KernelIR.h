//===- KernelIR.h - The kernel IR -------------------------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One instantiation of a spec as an LCF kernel: what the producer loads per
/// stage, what the consumer computes and how it finishes, with every name
/// resolved and every shape known. Lowering (SpecToIR) fills the program
/// part; the passes fill the plan (stages, bytes, registers, barriers) and
/// nothing else. Every node keeps the spec location it came from.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/Target/Arch.h"
#include "tkc/dsl/SourceManager.h"
#include "tkc/dsl/SpecAST.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tkc::ir {

using spec::DType;

/// Bytes of one element.
unsigned dtypeBytes(DType dtype);

/// The CUDA host type of one element, as launchers take it ("__nv_bfloat16").
const char *cudaTypeName(DType dtype);

/// A size: a constant, or a size bound at launch (e.g. `M`).
struct Size {
  std::optional<int64_t> constant;
  std::string symbol;

  std::string str() const { return constant ? std::to_string(*constant) : symbol; }
  friend bool operator==(const Size &, const Size &) = default;
};

struct Global {
  std::string name;
  DType dtype;
  std::vector<Size> dims;
  SourceLoc loc;
};

/// A tile one pipeline stage holds in shared memory.
struct StageTile {
  std::string name;
  DType dtype;
  int64_t rows, cols;
  SourceLoc loc;
  int64_t bytes() const { return rows * cols * dtypeBytes(dtype); }
};

/// An index that runs over 0 .. ceil(size / step) - 1.
struct IterVar {
  std::string name;
  Size size;
  int64_t step;
  SourceLoc loc;
};

/// One coordinate of a tile access, in units of the tile: an iteration
/// variable or 0 (for a leading dimension the tile does not span).
struct Coord {
  std::string var; ///< empty: the constant 0
  std::string str() const { return var.empty() ? "0" : var; }
};

/// `tile = Global[coords]` in the producer: one TMA tile load per stage.
struct Load {
  unsigned tile;   ///< index into Kernel::stageTiles
  unsigned global; ///< index into Kernel::globals
  std::vector<Coord> coords;
  SourceLoc loc;
};

/// Consumer registers that live across stages (split by rows over the
/// consumer warpgroups).
struct State {
  std::string name;
  DType dtype;
  int64_t rows, cols;
  SourceLoc loc;
};

/// `acc (+)= a @ b` with either operand possibly transposed.
struct Mma {
  unsigned acc;  ///< index into Kernel::state
  unsigned a, b; ///< indices into Kernel::stageTiles
  bool transposeA = false, transposeB = false;
  bool accumulate = true;
  SourceLoc loc;
};

/// One elementwise step of the finish on the accumulator.
struct EpilogueOp {
  enum class Kind {
    AddRowVector, ///< acc += G[coord] broadcast down the rows
    AddTile,      ///< acc += G[coords] (same shape as acc)
    Gelu,         ///< acc = gelu(acc), tanh form
  };
  Kind kind;
  unsigned state;
  std::optional<unsigned> global;
  std::vector<Coord> coords;
  SourceLoc loc;
};

/// `G[coords] = state` at the end of the finish.
struct Store {
  unsigned global;
  unsigned state;
  std::vector<Coord> coords;
  SourceLoc loc;
};

/// Numbers the passes choose. Zero means "not planned yet".
struct Plan {
  int stages = 0;
  int stageBytes = 0;  ///< one stage: exactly the TMA bytes of its tiles
  int finishBytes = 0; ///< the epilogue's staging tiles
  int safeStages = 0;  ///< stages wholly before the finish block
  int dynamicSharedBytes = 0;
  int producerRegisters = 0, consumerRegisters = 0;
  int accumulatorRegisters = 0; ///< per consumer thread
  int producerArrivals = 0, consumerArrivals = 0;
  int expectBytes = 0;               ///< bytes the producer arms per stage
  std::vector<int> finishBarrierIds; ///< one named barrier per consumer warpgroup
  int groupRows = 0;                 ///< grouped task order: tile rows per group (0: linear)
};

struct Kernel {
  std::string specName;
  std::string specFile;
  std::string name;                                        ///< the instantiation's C++ name
  std::vector<std::pair<std::string, std::string>> params; ///< name, value
  const ArchInfo *arch = nullptr;

  std::vector<Global> globals;
  std::vector<StageTile> stageTiles;
  std::vector<IterVar> tasks;
  IterVar loop;
  bool groupedOrder = true;
  int consumerWarpgroups = 1;
  std::optional<spec::StageCount> requestedStages;

  std::vector<Load> loads;
  std::vector<State> state;
  std::vector<unsigned> zeroInit; ///< state zeroed in setup
  std::vector<Mma> mmas;
  std::vector<EpilogueOp> epilogue;
  std::optional<Store> store;

  Plan plan;
};

/// The size symbols a kernel's launcher takes, in order: those the task
/// indices run over, the loop's, then the rest in order of appearance in the
/// globals. Shared by the CUDA and manifest emitters, so that the launcher and
/// its description cannot disagree.
std::vector<std::string> launchSizeSymbols(const Kernel &kernel);

/// Deterministic text of `kernel` (what --emit=ir and --print-after-all print).
void printKernel(const Kernel &kernel, llvm::raw_ostream &os);

/// Structural invariants between lowering and passes; a failure is an
/// internal error (InternalError), never a user error.
void verifyKernel(const Kernel &kernel);

} // namespace tkc::ir
