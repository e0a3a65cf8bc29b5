//===- KernelPrinter.h - Printing one kernel as kittens code ----*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The state the CUDA emitter shares while it prints one planned kernel: the
/// kernel, the writer, the struct's name, and how the names of the generated
/// code are spelt (coordinates, loop indices, register values). Each concern
/// prints in its own translation unit:
///
///   KernelPrinter.cpp    the kernel struct: types, layout, constants,
///                        block_entry, common_setup, the producer
///   ConsumerPrinter.cpp  the consumer's hooks: setup, compute (split stages
///                        and loop tails too), finish, release_finish
///   OpPrinter.cpp        program ops and elementwise expressions
///   LauncherPrinter.cpp  host launchers and their argument checks
///
/// The printer decides nothing: every choice it prints was made by a pass and
/// is read from the kernel's ops and plan. Names it makes start with `tkc_`,
/// so they cannot meet the spec's.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/Emit/CudaWriter.h"
#include "tkc/IR/KernelIR.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace tkc::emit {

/// Rows of a register tile one warp holds.
inline constexpr int kWarpRows = 16;
/// Warps of a warpgroup (each holds kWarpRows of its 64 rows).
inline constexpr int kWarpgroupWarps = 4;

/// kittens' element type name for `dtype` ("kittens::bf16").
const char *kittensScalar(spec::DType dtype);
/// `kittens::st_bf`, `st_hf` or `st_fl`: a shared tile of `dtype`.
const char *kittensSharedTile(spec::DType dtype);
/// `kittens::rt_bf` or `rt_hf`: a register operand of a product of `dtype`.
const char *kittensOperandTile(spec::DType dtype);
/// A float as a C++ literal ("0.5f", "-INFINITY").
std::string floatLiteral(double value);
/// kittens' 4-D coordinate {b, d, r, c} of up to four parts, the missing leading ones 0.
std::string kittensCoord(std::vector<std::string> parts);

class KernelPrinter {
public:
  /// `layoutOf`: for a kernel's whole-tile copy, the struct whose layout it shares.
  KernelPrinter(const ir::Kernel &kernel, CudaWriter &w, std::string layoutOf = "");

  // KernelPrinter.cpp
  void printStruct();
  void printStaticAsserts();
  /// The struct of the kernel's whole-tile copy (Kernel::wholeTiles), if any.
  void printWholeTiles();

  // LauncherPrinter.cpp
  void printLauncherDeclaration();
  void printLauncher();
  /// The launcher that chooses between `members` (this kernel first) at each call.
  void printChoosingLauncher(llvm::ArrayRef<const KernelPrinter *> members);
  /// The launcher's name: the kernel's own, or that of the launcher choosing it.
  const std::string &publicName() const;
  /// Whether this kernel's launcher is internal to the .cu (another chooses it).
  bool isChosen() const;

  const ir::Kernel &kernel() const { return k; }

private:
  // KernelPrinter.cpp: names and spellings.
  std::string describe(bool launcher = false) const;
  std::string glType(const ir::Global &g) const;
  std::string glValue(const ir::Global &g, bool constCast) const;
  /// The shared tile type a TMA global moves (`a_tile`, `result_tile`).
  std::string tileOf(unsigned global) const;
  std::string loopIndex() const;
  std::string coordExpr(const ir::Coord &c, const std::string &common = "args.common.") const;
  std::string deviceIndex(const ir::IndexExpr &e, const std::string &common) const;
  std::string tileCoord(const std::vector<ir::Coord> &coords) const;
  std::string elementCoord(const ir::Load &load) const;
  std::string loopTailElement(const std::string &index, const std::string &cast) const;
  std::string varExpr(const std::string &var) const;
  /// A size as the launcher passed it: for strides and the tensors' extents.
  std::string sizeExpr(const ir::Size &size) const;
  /// A size as a task sees it, where it bounds positions: along sequences (ir::Sequences),
  /// the task's sequence's length; otherwise sizeExpr.
  std::string extentExpr(const ir::Size &size, const std::string &common = "args.common.") const;
  /// The task's sequence's first element along the sequences' size.
  std::string sequenceStart(const std::string &common = "args.common.") const;
  /// Global `g` is stored along sequences: by the warpgroup's threads, rows past the
  /// sequence's end skipped (TMA would write them into the next sequence).
  bool storedByThreads(unsigned g) const;
  /// The element coordinate of a warpgroup tile access whose rows run along sequences.
  std::string warpgroupElementCoord(const std::vector<ir::Coord> &coords, const ir::Global &g,
                                    int64_t rows, int64_t cols, bool next = false) const;
  /// Columns of a bounded value that are present: `extent - var * step`.
  std::string columnLimit(const ir::ColumnBound &bound) const;
  std::string minusLeadBlocks() const;
  std::string minusLeadRows() const;
  /// ` + (long long)args.globals.N - (long long)args.globals.M` for a loop bound's shift.
  std::string deviceShift(const std::vector<ir::SizeTerm> &shift) const;
  /// What the loop's stop adds to the row form's end: the shift's sizes and, with a scalar
  /// stop, ceil(scalar) - 1.
  std::string stopShift() const;
  std::string loopStartElement(const std::string &rowOffset) const;
  std::string rowsBlock(bool next = false) const;
  /// This warpgroup's row block among `parts` (`tkc_wg / cols`, or `tkc_wg` where the blocks
  /// are one column wide).
  static std::string stageRowBlock(const ir::Parts &parts);
  /// The TMA coordinate of this warpgroup's tile of a global at `coords` (in tiles of 64
  /// rows); with `perWarp`, of this warp's 16 rows of it (in tiles of 16 rows).
  std::string warpgroupCoord(const std::vector<ir::Coord> &coords, bool next = false,
                             const std::optional<ir::Parts> &stageRows = std::nullopt,
                             bool perWarp = false) const;
  /// Warpgroup tile `tile` of warpgroup `warpgroup` (this one's by default), this task's copy
  /// or with `next` the next task's.
  std::string warpgroupTileRef(unsigned tile, bool next = false,
                               const std::string &warpgroup = "tkc_wg") const;
  std::string stagingType(const ir::ProgramOp &store) const;
  std::string stagingRef(const ir::ProgramOp &store) const;
  /// kittens::tma's call for a tile store: a store, or for `+=` a reduce-add.
  std::string storeCall(const ir::ProgramOp &store) const;
  void printStageStore(const ir::ProgramOp &op);
  /// Before compute's op `op`: loads the globals read per column that it reads first
  /// (columnReadFirst).
  void printColumnReadsFor(const ir::ProgramOp &op);
  /// In compute: each global read per column (Kernel::columnReads) and the index of the op
  /// that reads it first (ir::columnReadSpan); empty elsewhere.
  std::vector<std::pair<unsigned, size_t>> columnReadFirst;
  /// `x.T @ k` (a staged register operand): x staged, the warpgroups met, the products.
  void printStagedMma(const ir::ProgramOp &op);
  /// kittens::warpgroup's product for `mma`'s operands: mma_AB, mma_ABt, mma_AtB or mma_AtBt.
  std::string mmaFunction(const ir::ProgramOp &mma) const;
  void printStageStoresDrained();
  bool needsFinishBlock() const;
  /// Columns of the split result (plan.resultParts) one part holds.
  int64_t partCols() const;

  // KernelPrinter.cpp: the struct.
  void printGlobalMember(unsigned g);
  void printTaskDivisors();
  void printLayout();
  void printConstants();
  void printBlockEntry();
  void printCommonSetup();
  void printTileOfTask();
  void printTasksByLength();
  void printSequencedTask();
  /// `order`: a comment on the indices' order, printed before them (empty: none).
  void printRotatedTask(const std::string &total, const std::string &order);
  void printWholeLoopStart();
  void printStoppedLoop();
  /// The register tile a tile store stores: its value, or `tkc_out` computed from its
  /// expression (printed here).
  std::string storedTile(const ir::ProgramOp &store);
  void printProducer();

  // ConsumerPrinter.cpp
  void printConsumer();
  void prologue(const std::vector<ir::ProgramOp> &ops, bool setup = false, bool next = false);
  void printComputeIters(const std::string &idle);
  void printComputeBody();
  void printSplitCompute();
  void printTailCompute(const ir::Kernel &of);
  void printStorePart();
  void printReleaseFinish();
  void printRelease();
  std::string idleWarpgroupCondition() const;

  // OpPrinter.cpp
  void printOps(const std::vector<ir::ProgramOp> &ops);
  void printOps(const ir::ProgramOp *begin, const ir::ProgramOp *end);
  std::string valueRef(unsigned index) const;
  /// The consumer state's register holding task read `index` (Kernel::taskReads).
  std::string taskReadRef(unsigned index) const;
  void printTaskReads();
  std::pair<std::string, std::string> columnReadAccess(const ir::ColumnRead &read,
                                                       const std::string &first) const;
  std::string elementwise(const ir::Elementwise &e) const;
  std::string taskInteger(const ir::Elementwise &e) const;
  struct PositionParts {
    std::string block, lane, constant;
  };
  PositionParts positionParts(const ir::Elementwise &e) const;
  std::string floatPosition(const ir::Elementwise &e) const;
  std::string scaledPosition(const std::string &factor, const ir::Elementwise &position) const;
  void printApply(const std::string &dst, bool tile, const ir::Elementwise &e);
  void declareIfNew(unsigned index);
  void printAssign(const ir::ProgramOp &op);
  void printAssignAndRowSum(const ir::ProgramOp &op, const ir::ProgramOp &sum);
  void printMaskedAssign(const ir::ProgramOp &op, const ir::RegValue &v);
  std::string uniformly(const ir::Elementwise &e, bool holds);
  std::string rowReduceCall(const ir::ProgramOp &reduce, const std::string &f) const;
  void printRowReduce(const ir::ProgramOp &op);
  void printMma(const ir::ProgramOp &op);
  /// `copied`: a register operand is the bf16 copy an earlier product made (copiedBefore).
  std::string mmaOperand(const ir::MmaOperand &o, bool left, int64_t contraction,
                         const std::optional<ir::ColumnBound> &bound, spec::DType dtype,
                         bool copied);
  /// The bf16 (or other 16/8-bit) copy of register value `value` that products read: made
  /// here (its absent columns past `bound` zeroed), or already made where `copied`.
  std::string operandCopy(unsigned value, spec::DType dtype, int64_t cols,
                          const std::optional<ir::ColumnBound> &bound, bool copied);
  /// Whether product `op` of the body being printed reads an earlier product's copy of its
  /// register operand (ir::operandCopySource).
  bool copiedBefore(const ir::ProgramOp &op) const;
  /// The element type register value `value` is converted to as a product's operand.
  spec::DType operandDType(unsigned value) const;
  /// `tkc_p_bf16`: the register operand copy of `value`.
  std::string operandName(unsigned value, spec::DType dtype) const;
  /// Part `p` of stage tile `t`'s columns of the split result (the whole tile without parts).
  std::string stagePart(const std::string &tile, const ir::StageTile &t, bool transposed,
                        int p) const;
  /// `tkc_bias_regs`: this warp's rows of stage tile `tile`, read as numbers.
  std::string stageRegisters(unsigned tile) const {
    return "tkc_" + k.stageTiles[tile].name + "_regs";
  }
  std::string stageRef(const ir::StageTile &t) const;
  void printAddGlobal(const ir::ProgramOp &op);
  void printStoreTile(const ir::ProgramOp &op);
  std::pair<std::string, std::string> rowsAccess(const ir::ProgramOp &op) const;
  void printLoadRows(const ir::ProgramOp &op);
  void printStoreRows(const ir::ProgramOp &op);
  bool bodyUsesRows(const std::vector<ir::ProgramOp> &ops) const;
  bool readWaitDeferred(const ir::ProgramOp &store) const;
  bool releaseDeferred(const ir::ProgramOp &store) const;
  /// Starts a new hook: the names it declares are its own.
  void beginFunction();

  // LauncherPrinter.cpp
  std::string launcherParams() const;
  std::string launcherSignature(bool withDefault, const std::string &name) const;
  void printCheck(const std::string &call);
  void printGlobalInit(unsigned g);
  void printIndexChecks();
  void printDivisionChecks(const ir::IndexExpr &e, const std::string &global);

  const ir::Kernel &k;
  CudaWriter &w;
  std::string structName;
  std::string layoutOf;
  /// Set while printing `k`, a loop tail, as compute_tail of this kernel's struct.
  const ir::Kernel *tailOf = nullptr;
  /// The ops of the body being printed (printOps).
  const ir::ProgramOp *bodyBegin = nullptr, *bodyEnd = nullptr;
  /// While printing store_part: how the split result's part is spelt ("acc").
  std::string resultPart;
  /// Names declared in the hook being printed, and the bf16 product operands a fused
  /// pass wrote there (no copy needed).
  llvm::StringSet<> declared, operandsWritten;
  llvm::StringSet<> emittedChecks;
  unsigned comparisons = 0;
  mutable bool withDefaults = false;
};

} // namespace tkc::emit
