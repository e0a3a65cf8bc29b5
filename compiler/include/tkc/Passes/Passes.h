//===- Passes.h - The kernel IR passes and their pipeline --------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/IR/KernelIR.h"
#include "tkc/dsl/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tkc {

/// Consumer programs: drops a column bound (and so the partial-tile code)
/// where, in every row that is stored, each column past the bound reaches its
/// readers as their identity already: -inf into row maxima, 0 into row sums
/// and register-operand products — causal attention's
/// `where(col(j) > row(i), -inf, s)`. Proved by evaluating compute at such a
/// column; records the bound in Program::maskedBounds.
bool dropMaskedBounds(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Consumer programs: a tile statement `s = e * c` with a positive factor c
/// (numbers, and scalars whose `check:` keeps them positive) assigns `s = e`;
/// a later row maximum or minimum of s is multiplied by c once per row, and
/// every other reader reads `s * c` (fused by ptxas into the next add).
/// Skipped when s is state, a matrix operand, or accumulated into.
bool deferScale(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Consumer programs: gives each per-row subexpression of a tile statement
/// (e.g. exp2(m - m_new) in an update of o) a row vector of its own, assigned
/// just before the statement, so that it is computed once per row rather than
/// once per element. Nothing else changes; the matrix-product form is untouched.
bool hoistRowInvariants(ir::Kernel &kernel, DiagnosticEngine &diags);

/// A state tile that setup zeroes and that compute's first op touching it accumulates a
/// product into (the GEMM's `acc = 0`, `acc += a @ b`) is not zeroed: the product of a
/// task's first stage overwrites it (ProgramOp::firstStageOverwrites). Only for a loop over
/// its whole size (no stop, start or tail), where every task computes its first stage.
bool firstProductOverwrites(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Split finish: a program that accumulates one product of stage tiles into a state tile 256
/// columns wide and stores it (after globals added and elementwise functions of itself) keeps
/// it in two column halves; each task's last stages compute the left half first, and its store
/// leaves while the right half's products run (the finish then stages and stores the right
/// half). Guarantees: plan.resultParts (0 or 2), resultValue and splitStages.
bool splitFinish(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Shared memory: sizes one stage (the TMA bytes of its tiles, 1024-aligned),
/// chooses the stage count for `stages: auto` (the most that fit) or checks
/// a requested one, and places the finish block at the end of the budget.
/// Per-warpgroup tiles lie before the stages. A matrix-product result is staged one
/// part at a time (split-finish); its split stages are at most the ring's, and none when
/// the finish block aliases a stage.
/// Needs: lowered program. Guarantees: plan.stages, stageBytes, finishBytes,
/// safeStages >= 1 and dynamicSharedBytes set and within the arch's limit;
/// otherwise an error with one note per buffer.
bool planSharedMemory(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Registers: the producer warpgroup keeps 40 (24 beside three consumer
/// warpgroups), the consumers take the rest (a multiple of 8, at most 256).
bool planRegisters(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Globals read per column: each is held in registers, the lane's columns of the stage, from
/// its first reader to its last. Where the program would not fit the consumers' registers so
/// (every product waited for at once), a read with one reader is read in place instead: that
/// op loads each element's column from the stage (the same loads, no registers held).
bool placeColumnReads(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Consumer programs: a compute store of a product's result moves below the products after
/// it that do not make what it stores (where the registers allow); then a product followed, before
/// the first op that needs it, by another product, or issued while one of a batch is in flight,
/// stays in flight up to that op (ProgramOp::shadow), as many of them as the consumers' registers
/// hold. None with a shadow already (overlap-row-sums) or a result in parts.
bool batchProducts(ir::Kernel &kernel, DiagnosticEngine &diags);

/// The registers a consumer thread keeps at its program's busiest op: the state, the
/// temporaries still to be read (compute walked twice, so that what a stage leaves for
/// the next counts), what the op itself needs beside them (a product's bf16 copy of an
/// f32 operand, held through its shadow), a value written only as a bf16 operand at
/// half an f32 tile's cost. RegisterLiveness.cpp says how each kind of op counts.
struct RegisterPeak {
  int registers = 0; ///< per consumer thread: state + live temporaries + held copies
  int state = 0;
  int held = 0; ///< registers of products' bf16 copies of f32 operands, at `op`
  const ir::ProgramOp *op = nullptr;
  ir::Body body = ir::Body::Setup;
  std::vector<unsigned> live; ///< the temporaries live at `op`
  std::vector<int> cost;      ///< registers per thread, per value
  /// The globals read per column (Kernel::columnReads) held at `op`: from compute's first op
  /// that reads one to its last.
  std::vector<unsigned> columnReads;
};
RegisterPeak peakLiveRegisters(const ir::Kernel &kernel);
/// The registers a consumer thread needs beside its live values (the target's Tuning).
int registerOverhead(const ir::Kernel &kernel);
/// Whether the registers live at the program's busiest op plus the overhead fit the
/// consumers' share (what check-registers requires; passes that move ops ask it first).
bool fitsRegisters(const ir::Kernel &kernel);

/// Consumer programs: the registers live at the program's busiest op
/// (peakLiveRegisters) plus the target's overhead (more beside a result in parts) fit
/// the consumers' share; otherwise an error at that op with a note per live value.
/// Runs after the passes that move and fuse ops. Guarantees: plan.liveRegisters.
bool checkRegisters(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Consumer programs: a row sum that neither feeds nor reads the register-
/// operand product of compute (attention's `rowsum(p)` beside `p @ v`), with
/// the ops before the product that read it, runs after the product's issue,
/// before its wait (the product's `shadow`) — when the product has at least
/// twice the sum's columns and the live registers still fit.
bool overlapRowSums(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Consumer programs: a state row vector that setup zeroes and compute updates
/// only as `l = l * r + rowsum(p)` (shares times factors that read no share, plus
/// shares), read nowhere else before finish, keeps each lane's share of its rows
/// (the quad's four lanes not combined): the sums it adds skip their shuffles and
/// finish combines l once, first. Marks the value and those sums `laneShares`.
bool keepRowSumsAsShares(ir::Kernel &kernel, DiagnosticEngine &diags);

/// How each elementwise statement is computed: with the row sum after it in one pass (and
/// writing a product's bf16 operand directly), skipped where an affine mask changes nothing,
/// or skipped where a row factor is 1 (ProgramOp's fusion fields; the emitter prints them).
bool fuseElementwise(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Task order (grouped, rotated, or by length with its run-time bounds), row blocks in turn,
/// the ring's start, finish blocks per warpgroup, and what a block does at its entry (early
/// stages, descriptor prefetch), from the program and the target's tuning numbers.
/// Needs: plan.stages.
bool scheduleTasks(ir::Kernel &kernel, DiagnosticEngine &diags);

/// Synchronisation: arrivals per stage, bytes the producer arms (exactly the
/// bytes it loads), one named barrier per consumer warpgroup for the finish
/// (ids above the template's reserved 0 and below 13), and whether the tasks
/// of a stopping index are aligned to the end of its size.
bool planSynchronization(ir::Kernel &kernel, DiagnosticEngine &diags);

struct PipelineOptions {
  bool printAfterAll = false;
  bool timePasses = false;
  /// Steps (pipelineSteps()) after which to print the IR.
  std::vector<std::string> printAfter = {};
  /// Where --print-after-all, --print-after and --time-passes write.
  llvm::raw_ostream *log = nullptr;
};

/// Runs every pass in order (see Passes.def), verifying the kernel after
/// each. Returns false after the first pass that reports an error.
bool runPassPipeline(ir::Kernel &kernel, DiagnosticEngine &diags, const PipelineOptions &options);

/// The names of every step compileInstance runs, in order: lower, the passes,
/// loop-tail, whole-tiles.
std::vector<std::string> pipelineSteps();

/// Prints every step: its name and summary, in order.
void printPassList(llvm::raw_ostream &os);

} // namespace tkc
