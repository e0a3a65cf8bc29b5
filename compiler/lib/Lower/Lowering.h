//===- Lowering.h - One instantiation lowered to kernel IR ------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The state shared while one instantiation of a spec is lowered to kernel IR
/// (lowerSpecToIR): name resolution, condition evaluation and shape/dtype
/// checking, producing the producer's TMA loads and the consumer's program.
/// The consumer is lowered into an ir::Program: register values with
/// block-level shapes, and elementwise assignments, row reductions, matrix
/// products, globals added in finish, per-warpgroup tile loads and stores.
/// Every value gets its shape checked here, at its location; the emitter only
/// prints. Anything the lcf lowering cannot express is reported as not
/// supported yet, at its location. Each concern is its own translation unit:
///
///   SpecToIR.cpp      Lowering::run and the public entry points
///   Conditions.cpp    parameters, conditions, constants, scalar checks
///   Declarations.cpp  globals, scalars, tiles, state, and their names
///   Grid.cpp          task indices, the loop, its stop, start and tail
///   Expressions.cpp   index expressions, values and their shapes, products
///   Statements.cpp    assignments, added globals, warpgroup tile loads, stores
///   Program.cpp       the producer's loads, the consumer's bodies, the checks
///                     over the whole program
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/Lower/SpecToIR.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tkc::lower {

using stmt::Expr;

/// A compile-time value in a condition.
struct CondValue {
  enum class Kind { Bool, Number, Symbol };
  Kind kind;
  bool boolean = false;
  double number = 0;
  std::string symbol;
  /// For a parameter's value: the parameter (to check symbols against it).
  const spec::ParamDecl *param = nullptr;
  /// A bare name that is not a parameter: it must turn out to be a value of
  /// the parameter it is compared with, or it is an unknown name.
  const Expr *unresolved = nullptr;

  std::string describe() const {
    switch (kind) {
    case Kind::Bool:
      return boolean ? "true" : "false";
    case Kind::Number:
      return fmt::format("the number {}", number);
    case Kind::Symbol:
      return "'" + symbol + "'";
    }
    return "?";
  }
};

/// A parameter's value as the spec spells it (booleans as true/false).
std::string paramValueName(const spec::ParamValue &value);

/// A lowered expression: its elementwise form and its shape. A tile has
/// rows and columns; a row vector rows only (one value per row); `col(j)`
/// columns only; a scalar neither.
struct Typed {
  bool hasRows = false, hasCols = false;
  int64_t rows = 0, cols = 0;
  bool boolean = false;
  ir::Elementwise e;
  std::optional<ir::ColumnBound> bound;
};

class Lowering {
public:
  /// `tailStep`: lower the instantiation as its loop tail (LoopTail), the
  /// stage tiles' extent along the loop and the loop's step set to it.
  Lowering(const spec::KernelSpec &spec, const Instance &instance, const ArchInfo &arch,
           DiagnosticEngine &diags, std::optional<int64_t> tailStep = std::nullopt)
      : spec(spec), instance(instance), arch(arch), diags(diags), tailStep(tailStep) {}

  // SpecToIR.cpp
  /// The instantiation's kernel; std::nullopt once its errors are reported
  /// (every error it has, where later checks do not depend on earlier ones).
  std::optional<ir::Kernel> run();

private:
  //===--------------------------------------------------------------------===//
  // Conditions.cpp: parameters, conditions, constants, scalar checks
  //===--------------------------------------------------------------------===//

  const spec::ParamDecl *findParam(llvm::StringRef name) const;
  const spec::ParamValue &valueOf(const spec::ParamDecl &param) const;
  std::optional<CondValue> evalCond(const Expr &expr, const std::string &what);
  std::optional<CondValue> evalBinary(const Expr &expr, const CondValue &lhs, const CondValue &rhs,
                                      const std::string &what);
  bool expectBool(const CondValue &value, const Expr &expr, const std::string &what);

  /// Whether a declaration or statement guarded by `cond` is part of this
  /// instantiation. std::nullopt after an error.
  std::optional<bool> holds(const Expr *cond, const std::string &what);

  std::vector<llvm::StringRef> paramNames() const;
  void reportUnknownName(const Expr &expr, const std::string &what,
                         llvm::ArrayRef<llvm::StringRef> candidates);

  /// The value of an integer parameter in this instantiation.
  std::optional<int64_t> intParam(llvm::StringRef name) const;

  /// `constants:` folded for this instantiation; each must be an integer.
  void declareConstants();

  /// `expr` folded to a number if it only uses numbers, numeric parameters,
  /// named constants, + - * /, and sqrt/exp2/log2/exp/log/min/max. Reports
  /// nothing; std::nullopt if it is not constant.
  std::optional<double> foldConstant(const Expr &expr) const;

  /// `a if c else b` with `c` a condition on parameters: the branch this
  /// instantiation takes (recursively); `expr` itself otherwise. Null after
  /// an error in the condition.
  const Expr *chooseBranch(const Expr &expr) const;

  /// `check:` as comparisons `name op number`, appended to `out`; the
  /// number may be on either side and is folded like a default.
  bool lowerScalarCheck(const Expr &expr, const std::string &name,
                        std::vector<ir::Scalar::Check> &out);

  //===--------------------------------------------------------------------===//
  // Declarations.cpp: globals, scalars, tiles, state, and their names
  //===--------------------------------------------------------------------===//

  /// The rows of the block a task's register values hold: 64 per consumer warpgroup.
  int64_t rowsOfBlock() const { return int64_t{64} * kernel.consumerWarpgroups; }

  /// The lcf template runs a TMA producer warpgroup that hands its registers
  /// to the consumers with setmaxnreg.
  void checkTemplateFeatures();

  /// Whether `name` may name something of the spec's in the generated C++: not a C++
  /// or CUDA keyword or built-in, not a name the generated code declares, not `tkc_...`;
  /// reports it at `loc` otherwise.
  bool usableName(const std::string &name, SourceLoc loc);

  /// A size bound at launch is a launcher parameter beside the globals and
  /// scalars: one named like another of the spec's names is refused.
  void checkSizeNames();

  /// Every name a statement may use, with where it was declared. `inCode`: the
  /// name reaches the generated C++ (parameters and constants are folded away).
  bool declareName(const std::string &name, SourceLoc loc, const char *kind, bool inCode = true);

  /// `warpgroups: 3`, or a constant or parameter's name; 1 when absent.
  bool declareConsumerWarpgroups();

  /// An extent: a number, an integer parameter (a constant here) or a size
  /// bound at launch.
  ir::Size toSize(const spec::Extent &extent) const;

  /// A declaration's dtype: `written`, or the branch of `choice` (`f16 if half else bf16`)
  /// this instantiation takes.
  spec::DType chooseDType(spec::DType written, const Expr *choice);
  void declareGlobals();
  /// `layout:` of a global: its memory order as indices into its dims; false if refused.
  bool lowerLayout(const spec::GlobalDecl &decl, ir::Global &g);
  void declareScalars();
  void declareTiles();
  void declareState();
  std::vector<llvm::StringRef> declaredNames() const;

  /// Checks that `name` is declared; reports it otherwise.
  bool known(const Expr &name, const std::string &what);

  const ir::IterVar *findTask(llvm::StringRef name) const;
  const ir::IterVar *findIterVar(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Grid.cpp: task indices, the loop, its stop, start and tail
  //===--------------------------------------------------------------------===//

  static std::optional<int64_t> positiveInteger(const Expr &expr);

  /// A size by name: a launch size, or an integer parameter (a constant).
  ir::Size sizeNamed(const std::string &name) const;

  /// `STEP * (VAR + 1)` or `(VAR + 1) * STEP`: the end row of task index VAR.
  std::optional<ir::LoopBound> parseTaskEnd(const Expr &expr) const;

  /// `row(VAR)` (of `row(VAR) + 1`): the loop's elements up to each row of task index
  /// VAR. The task as a whole stops where `STEP * (VAR + 1)` would.
  std::optional<ir::LoopBound> parseRowEnd(const Expr &row) const;

  /// The terms of a sum, each with whether it is subtracted.
  static void signedTerms(const Expr &expr, bool negative,
                          std::vector<std::pair<const Expr *, bool>> &out);

  /// A size bound at launch (not a parameter, constant or other declared name).
  bool isLaunchSize(const std::string &name) const;

  /// The second operand of the loop's `min(SIZE, ...)`: `STEP * (VAR + 1) + SHIFT` or
  /// `row(VAR) + 1 + SHIFT`, SHIFT launch sizes added or subtracted (in any order).
  std::optional<ir::LoopBound> parseStop(const Expr &expr) const;

  /// `M / 128` as (size M, step 128); for the loop also
  /// `min(N, 192 * (i + 1)) / 128` (stop at the task's last row) and
  /// `min(N, row(i) + 1) / 128` (stop at each row).
  std::optional<std::pair<ir::Size, int64_t>>
  parseIterExtent(const Expr &written, const std::string &what, ir::LoopBound *bound);

  /// `start: {LOOP: row(TASK) - WINDOW + OFFSET}` (or a conditional choosing
  /// one per instantiation): the terms of a sum of `row(TASK)` once, integers,
  /// and at most one subtracted scalar or integer constant. TASK must be the
  /// index the loop stops at.
  void declareLoopStart(const spec::IterVar &var);

  /// `tail: {LOOP: T}` (or a conditional choosing one per instantiation): T
  /// a positive multiple of 16 up to the loop's step, an integer or an integer
  /// constant; the step itself is no tail. Only for a loop over its whole size.
  void declareLoopTail(const spec::IterVar &var);

  /// Lowering a loop tail: each stage tile's extent along the loop becomes the
  /// tail's step, and so does the loop's (what col() and the bounds read).
  void applyTailStep();

  void declareGrid();
  /// `sequences: {T: offsets}` of `grid` (ir::Sequences).
  void declareSequences();
  /// Every access along the sequences' size is a tile's or a row vector's rows, indexed by
  /// a task or loop index (the sequence's offset is added to it).
  void checkSequencedAccesses();

  /// `requires:` as comparisons of size expressions, joined by `and`.
  void declareRequirements();
  std::optional<ir::IndexExpr> lowerSizeExpr(const Expr &expr);

  //===--------------------------------------------------------------------===//
  // Expressions.cpp: index expressions, values and their shapes, products
  //===--------------------------------------------------------------------===//

  /// `h / (H / H_kv)`: grid indices, sizes, numbers, + * /. No subtraction:
  /// the launcher checks the largest value against the dimension, which is
  /// only sound for expressions that grow with their indices.
  std::optional<ir::IndexExpr> lowerIndexExpr(const Expr &expr, size_t position,
                                              const std::string &global);

  static std::string describe(const Typed &t);
  static std::string describe(const ir::RegValue &v);

  /// Shape of `a op b` under broadcasting; reports a mismatch at `loc`.
  std::optional<Typed> combine(const Typed &a, const Typed &b, SourceLoc loc,
                               const std::string &what);

  ir::Elementwise valueRef(unsigned index) const;
  Typed typedValue(unsigned index) const;
  unsigned newValue(const std::string &name, const Typed &shape, bool isState, SourceLoc loc);

  /// A compiler-made temporary (a reduction's result, a product's).
  unsigned newTemporary(const Typed &shape, SourceLoc loc);

  bool isSharedTile(const Expr &expr) const;

  /// Lowers `expr`, appending the products and reductions it needs to `ops`.
  std::optional<Typed> lowerValue(const Expr &expr, std::vector<ir::ProgramOp> &ops);

  std::optional<Typed> binary(const std::string &op, Typed lhs, Typed rhs, SourceLoc loc);
  std::optional<Typed> lowerCall(const Expr &call, std::vector<ir::ProgramOp> &ops);
  /// `G[h]` as a number: a TaskRead; `L[b, h, i]` with `i` the task index of the block's
  /// rows: one value per row (lowerRowsRead); `K[b, j]` with `j` the loop's index, in
  /// compute: one value per column (lowerColumnsRead).
  std::optional<Typed> lowerTaskRead(const Expr &access);
  std::optional<Typed> lowerColumnsRead(const Expr &access);
  /// The indices of `access` before `end` (operand 0 is the global) are each a task index
  /// stepping by 1, or an expression; false once one is not (reported at it).
  bool taskLevelIndices(const Expr &access, size_t end);
  /// `G[c0, c1, ...]` as a read is written back (the key that makes two reads one).
  std::string accessText(unsigned global, const std::vector<ir::Coord> &coords) const;
  /// A stage tile holding the block's rows, read as numbers in compute (StageRead).
  std::optional<Typed> lowerStageRead(const Expr &name);
  /// `L[b, h, i]`: a state row vector loaded at the top of setup (LoadRows), one per
  /// distinct read.
  std::optional<Typed> lowerRowsRead(const Expr &access);
  /// A global read as numbers is not also loaded, stored or added as tiles.
  void checkTaskReadsAlone();

  /// The global dimension that rows (`dim` 0) or columns (1) of stage tile
  /// `tile` come from, as a bound; none when the tile lies wholly inside a
  /// constant dimension.
  std::optional<ir::ColumnBound> stageTileBound(unsigned tile, int dim) const;

  /// `a @ b` into `into` (a new temporary when none), accumulating or not.
  std::optional<Typed> lowerProduct(const Expr &product, std::vector<ir::ProgramOp> &ops,
                                    std::optional<unsigned> into, bool accumulate);
  /// A product's left operand in registers: its value, or a temporary assigned `operand`
  /// first where it is an expression; with its shape. std::nullopt after an error (at `loc`).
  std::optional<std::pair<unsigned, Typed>> lowerRegisterOperand(const Expr &operand, SourceLoc loc,
                                                                 std::vector<ir::ProgramOp> &ops);
  /// `x.T @ k`, x a register tile (the `+=` store `stagedStore` in compute): x staged in
  /// shared memory, the product contracting over the block's rows; its result's rows are x's
  /// columns (RegValue::stageRows).
  std::optional<Typed> lowerStagedProduct(const Expr &product, std::vector<ir::ProgramOp> &ops);
  /// The value of the `+=` store in compute being lowered, when it is a product: the one
  /// place a transposed register left operand is accepted.
  const Expr *stagedStore = nullptr;

  //===--------------------------------------------------------------------===//
  // Statements.cpp: assignments, added globals, warpgroup tile loads, stores
  //===--------------------------------------------------------------------===//

  /// Where a statement's value goes: an existing value, or a new one named
  /// by the statement (shape from the value).
  std::optional<unsigned> assignTarget(const Expr &target, const Typed &value);

  void lowerAssignment(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops);

  /// `x = x + G[...]`: G a vector along x's columns (one value per column, the
  /// same in every row), or a tile of x's shape.
  void lowerAddGlobal(const stmt::Stmt &statement, unsigned dst, const Expr &access,
                      std::vector<ir::ProgramOp> &ops);

  /// Rank of the global an access names, or 0 if it is not a known global.
  size_t globalRank(const Expr &access) const;

  void noteSet(const std::string &name);
  void lowerLoadTile(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops);
  void lowerStoreOp(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops);

  //===--------------------------------------------------------------------===//
  // Program.cpp: the producer's loads, the consumer's bodies and program checks
  //===--------------------------------------------------------------------===//

  /// The statements of `body` that this instantiation keeps.
  std::vector<const stmt::Stmt *> activeStatements(const std::optional<spec::StageBody> &body);

  /// `G[i, j]` addressed in units of a `rows x cols` tile (cols only for a
  /// vector): checks each index and returns the coordinates.
  std::optional<std::pair<unsigned, std::vector<ir::Coord>>>
  lowerAccess(const Expr &access, std::vector<int64_t> span, const std::string &what,
              const std::string &unitName);

  void unsupported(const stmt::Stmt &statement, const std::string &body, const char *hint);
  void lowerLoads();
  void checkEveryLoadIsUsed();
  void lowerBody(const std::optional<spec::StageBody> &body, const std::string &name,
                 std::vector<ir::ProgramOp> &ops);
  void lowerProgram();

  /// Each global has one use (ir::GlobalRole): loaded, stored, added or
  /// stored by rows. A second is refused where it is written.
  void checkGlobalUses();

  const spec::KernelSpec &spec;
  const Instance &instance;
  const ArchInfo &arch;
  DiagnosticEngine &diags;
  std::optional<int64_t> tailStep;
  ir::Kernel kernel;
  llvm::StringMap<SourceLoc> declared;
  llvm::StringMap<unsigned> globalIndex, tileIndex, scalarIndex, warpgroupTileIndex;
  /// `state:` declarations: tiles (cols > 1) and row vectors (cols 1).
  struct StateDecl {
    std::string name;
    int64_t rows, cols;
    SourceLoc loc;
  };
  std::vector<StateDecl> stateDecls;
  llvm::StringMap<int64_t> constantValues;

  // The consumer's program while it is lowered.
  ir::Program program;
  llvm::StringMap<unsigned> valueIndex;
  llvm::StringSet<> setInSetup;
  llvm::StringSet<> poisoned, reportedUnset;
  std::vector<std::string> bodyLocals;
  std::string currentBody;
  unsigned temporaries = 0;
  /// lowerRowsRead: each distinct read's state value, and its loads, which lowerProgram
  /// puts at the top of setup once every body is lowered.
  llvm::StringMap<std::optional<unsigned>> rowsReads;
  std::vector<ir::ProgramOp> rowsLoads;
  /// While lowering the rest of `s = (a @ b) * c`: the product already
  /// computed into `s`.
  std::pair<const Expr *, unsigned> productAlias{nullptr, 0};
};

} // namespace tkc::lower
