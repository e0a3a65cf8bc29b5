//===- KernelIR.h - The kernel IR -------------------------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One instantiation of a spec as an LCF kernel: what the producer loads per
/// stage, and the consumer's program (register values and the operations of
/// its setup, compute and finish), with every name resolved and every shape
/// known. Lowering (SpecToIR) fills the program; the passes rewrite it and
/// fill the plan (stages, bytes, registers, barriers, task order, fusions).
/// The emitter reads both and decides nothing. Every node keeps the spec
/// location it came from.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/Target/Arch.h"
#include "tkc/dsl/SourceManager.h"
#include "tkc/dsl/SpecAST.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
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
  std::vector<Size> dims; ///< in the order the kernel indexes them
  SourceLoc loc;
  /// `layout:`: the dims in memory order, outermost first, as indices into `dims` (the
  /// last always the last). Empty: packed in the order of `dims`.
  std::vector<unsigned> layout = {};
  /// The dims in memory order: the shape of the tensor a caller passes.
  std::vector<Size> storedDims() const;
  /// The element stride of each of `dims`, as C++ over `spell` of each extent.
  std::vector<std::string> strides(const std::function<std::string(const Size &)> &spell) const;
};

/// A scalar the launcher takes by value after the sizes (`scalars:` in the
/// spec), e.g. the softmax scale.
struct Scalar {
  /// One comparison of the spec's `check:` (`scale > 0`): the launcher refuses a
  /// value for which `value op bound` is false.
  struct Check {
    std::string op; ///< ">", ">=", "<" or "<="
    double bound = 0;
    bool accepts(double value) const;
    std::string str(const std::string &scalar) const;
  };
  std::string name;
  DType dtype;                        ///< f32 today
  std::optional<double> defaultValue; ///< folded at instantiation (`default:`)
  SourceLoc loc;
  std::vector<Check> checks = {}; ///< all must hold
  /// Every value the launcher accepts is > 0 (a check `> b` with b >= 0 or
  /// `>= b` with b > 0): passes may rely on it.
  bool positive() const;
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

/// An integer index expression of grid indices, launch sizes and numbers,
/// e.g. `h / (H / H_kv)`: what a coordinate may compute.
struct IndexExpr {
  /// Sub only in a requirement (an index expression never subtracts).
  enum class Kind { Var, Size, Number, Add, Sub, Mul, Div } kind = Kind::Number;
  std::string name;   ///< Var, Size
  int64_t number = 0; ///< Number
  std::vector<IndexExpr> operands;
  /// As the spec wrote it (`h / (H / H_kv)`).
  std::string str() const;
  /// C++ with every operation parenthesised; `leaf` spells grid indices and
  /// sizes (numbers are spelt as numbers).
  std::string render(const std::function<std::string(const IndexExpr &)> &leaf) const;
  /// Whether a grid index occurs in it (`var` empty), or the one named `var`.
  bool usesVar(const std::string &var = {}) const;
};

/// One comparison of the spec's `requires:` (`M <= N`): sizes and integers, + - *, compared
/// by the launcher before anything else is done with the sizes; a call where it fails is
/// refused.
struct Requirement {
  IndexExpr lhs, rhs;
  std::string op; ///< "<", "<=", ">", ">=", "==" or "!="
  SourceLoc loc;
  std::string str() const { return lhs.str() + " " + op + " " + rhs.str(); }
};

/// One coordinate of a tile access, in units of the tile: an iteration
/// variable, 0 (for a leading dimension the tile does not span), or an index
/// expression.
struct Coord {
  std::string var; ///< empty: the constant 0 (unless `expr` is set)
  std::optional<IndexExpr> expr;
  std::string str() const { return expr ? expr->str() : var.empty() ? "0" : var; }
};

/// `G[coords]` read as a number in the consumer's program, its coordinates elements
/// indexed by task indices (each one's task number), sizes and numbers: one value per
/// task, loaded once in setup into a register of the consumer's state.
struct TaskRead {
  unsigned global = 0;
  std::vector<Coord> coords;
  std::string text; ///< as written: `slopes[h]`
  SourceLoc loc;
};

/// `G[..., j]` read as numbers in compute, its last index the loop's: one value per column of
/// the stage's tiles (a per-key vector). The producer's second warp copies the stage's
/// columns into the stage (0 past the end) beside its TMA tiles, and each lane of the
/// consumers loads its columns from there before compute's first op that reads them.
struct ColumnRead {
  unsigned global = 0;
  std::vector<Coord> coords;
  std::string text; ///< as written: `kbias[b, j]`
  SourceLoc loc;
  /// Read from the stage at each element where its one reader uses it, not held in
  /// registers (column-reads-in-place).
  bool inPlace = false;
};

/// `tile = Global[coords]` in the producer: one TMA tile load per stage.
struct Load {
  unsigned tile;   ///< index into Kernel::stageTiles
  unsigned global; ///< index into Kernel::globals
  std::vector<Coord> coords;
  SourceLoc loc;
};

//===----------------------------------------------------------------------===//
// The consumer program: register values and the operations on them. Every
// register value is a block-level shape whose rows are split over the consumer
// warpgroups (64 rows each, 16 per warp).
//===----------------------------------------------------------------------===//

/// A shared-memory tile each consumer warpgroup owns (`per: consumer_warpgroup`),
/// loaded once per task in setup.
struct WarpgroupTile {
  std::string name;
  DType dtype;
  int64_t rows, cols; ///< one warpgroup's copy
  SourceLoc loc;
  int64_t bytes() const { return rows * cols * dtypeBytes(dtype); }
};

/// The shared tile a store in compute stages each stage's result in (one per consumer
/// warpgroup, 64 rows, the global's dtype), in the scratch block beside the warpgroup tiles:
/// each stage waits for the previous stage's TMA store to have read it, then writes it.
struct StagingTile {
  std::string name;
  DType dtype;
  int64_t cols = 0;
  int64_t bytes() const { return 64 * cols * dtypeBytes(dtype); }
};

/// Where the columns of a register tile lie in a global dimension: element
/// column c is position `var * step + c` of a dimension of extent `extent`.
/// Columns at or past the extent are absent: reductions skip them and a
/// matrix product contracts over zeros there.
/// The shared tile a transposed register left operand (`x.T @ k`) is staged in every stage:
/// one per consumer warpgroup (its 64 rows of x, in the product's 16-bit type) and per
/// stage-ring slot, so that a stage writes where no warpgroup still reads. The product
/// contracts over the block's rows, every warpgroup's copy, so the consumer warpgroups meet
/// at a barrier between the writes and the product.
struct OperandStaging {
  std::string name;
  DType dtype;
  int64_t cols = 0;
  int64_t bytes() const { return 64 * cols * dtypeBytes(dtype); }
};

struct ColumnBound {
  Size extent;
  std::string var;
  int64_t step = 0;
  friend bool operator==(const ColumnBound &, const ColumnBound &) = default;
};

/// How the warpgroups hold a value whose rows are the stage's (StageRows): `rows` x `cols`
/// blocks of it, each 64 rows by `cols` of the value's columns, warpgroup w the block
/// (w / cols, w % cols).
struct Parts {
  int rows = 1, cols = 1;
  friend bool operator==(const Parts &, const Parts &) = default;
};

struct RegValue {
  enum class Shape { Tile, RowVector };
  std::string name;
  Shape shape = Shape::Tile;
  DType dtype = DType::F32;
  int64_t rows = 0, cols = 0; ///< rows of the block; cols 1 for a row vector
  bool state = false;         ///< lives across stages (declared under `state`)
  /// A row vector whose lanes hold shares (each its own columns' part; the quad's four
  /// sum to the row's value) through setup and compute; finish makes them whole first
  /// (partial-row-sums).
  bool laneShares = false;
  std::optional<ColumnBound> bound;
  /// Set for a value whose rows are not the block's but the columns of the register value a
  /// transposed product staged (`x.T @ k`: the stage's rows); the warpgroups hold it in
  /// these parts. Its one use is a `+=` store in compute.
  std::optional<Parts> stageRows;
  SourceLoc loc;
  /// Columns one warpgroup holds.
  int64_t warpgroupCols() const { return stageRows ? cols / stageRows->cols : cols; }
};

/// Operators of the tile language's elementwise expressions.
enum class UnaryOp {
  Neg,
  Not,
  Exp2,
  Exp,
  Log2,
  Log,
  Sqrt,
  Rcp,
  Tanh,
  Abs,
  Gelu,
  GeluErf,
  Sigmoid,
  Silu,
  Sin,
  Cos
};
enum class BinaryOp { Add, Sub, Mul, Div, Max, Min, Pow, Eq, Ne, Lt, Le, Gt, Ge, And, Or };

/// How the spec spells an operator: "-", "exp2", "gelu"; "+", "max", "<=", "and".
const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);
/// The function named `name` (`exp2`, `gelu`, ...; not `-` or `not`), if it is one.
std::optional<UnaryOp> unaryFunction(llvm::StringRef name);
/// The operator spelt `op` (`+`, `<=`, `and`, `max`, ...), if it is one.
std::optional<BinaryOp> binaryOperator(llvm::StringRef op);
/// `<`, `<=`, `>`, `>=`, `==`, `!=`.
bool isComparison(BinaryOp op);
/// The value of a function of the tile language (not `not`) at `x`, in double: what the
/// compiler folds and reasons with; the GPU's may differ by the documented error.
double evaluate(UnaryOp op, double x);
/// The same for `+`, `-`, `*`, `/`, `max`, `min`, `pow` (not comparisons or logic).
double evaluate(BinaryOp op, double a, double b);
/// The comparison with its operands swapped (`<` for `>`); others unchanged.
BinaryOp swapped(BinaryOp op);

/// An elementwise expression, evaluated per element in f32. A row vector
/// broadcasts along a tile's columns.
struct Program;
struct Scalar;

struct Elementwise {
  enum class Kind {
    Value,      ///< `value`: a register value
    Number,     ///< `number` (may be +-inf)
    Scalar,     ///< `value`: index into Kernel::scalars
    TaskRead,   ///< `value`: index into Kernel::taskReads (`var`: as written, `slopes[h]`)
    Size,       ///< `var`: a launch size (`H`), as a number
    TaskIndex,  ///< `var`: a task index (`h`): the task's number along it
    RowIndex,   ///< row(var): var * step + the element's row in the block
    ColIndex,   ///< col(var): var * step + the element's column
    StageRead,  ///< `value`: index into Kernel::stageTiles (`var`: its name); the stage
                ///< tile's element at the element's row in the block and column (compute)
    ColumnRead, ///< `value`: index into Kernel::columnReads (`var`: as written); the global's
                ///< element at the element's column of the stage (compute), 0 past its end
    Unary,      ///< `unary` of operands[0]
    Binary,     ///< `binary` of operands[0] and operands[1]
    Where,      ///< operands: condition, if true, if false
  };
  Kind kind = Kind::Number;
  unsigned value = 0;
  double number = 0;
  std::string var; ///< RowIndex, ColIndex
  int64_t step = 0;
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add;
  std::vector<Elementwise> operands;
  std::string str(const Program &program, const std::vector<Scalar> &scalars) const;

  static Elementwise valueOf(unsigned index);
  static Elementwise numberOf(double number);
  static Elementwise unaryOf(UnaryOp op, Elementwise operand);
  static Elementwise binaryOf(BinaryOp op, Elementwise lhs, Elementwise rhs);
  bool isValue(unsigned index) const { return kind == Kind::Value && value == index; }
  bool isBinary(BinaryOp op) const { return kind == Kind::Binary && binary == op; }
  bool isUnary(UnaryOp op) const { return kind == Kind::Unary && unary == op; }
};

/// An operand of a matrix product. A transposed register operand is staged in shared memory
/// first (an OperandStaging: `staging`).
struct MmaOperand {
  enum class Where { Stage, Warpgroup, Register } where = Where::Stage;
  unsigned index = 0; ///< into stageTiles, warpgroupTiles or Program::values
  bool transposed = false;
  unsigned staging = 0; ///< a transposed register operand: into Kernel::operandStagings
};

struct Kernel;
/// The element type of a product's operands: its shared operands' (both alike), which a
/// register operand is converted to.
DType productDType(const Kernel &kernel, const MmaOperand &a, const MmaOperand &b);

/// A row reduction's operator.
enum class Reduce { Max, Sum };

struct ProgramOp {
  enum class Kind {
    Assign,    ///< dst = expr (elementwise; a tile or a row vector)
    RowReduce, ///< dst (row vector) = reduce(op, expr over a tile of `cols` columns)
    Mma,       ///< dst (f32 tile) (+)= a @ b
    AddGlobal, ///< dst (a tile) += global[coords]: a tile of it, or with `perColumn` a vector
               ///< of one value per column broadcast down the rows (finish only)
    LoadTile,  ///< warpgroup tile `tile` = global[coords] (TMA, setup)
    StoreTile, ///< global[coords] = expr (a tile; converted, staged, TMA); with `accumulate`
               ///< global[coords] += expr (TMA reduce-add: atomic per element)
    StoreRows, ///< global[coords] = expr (a row vector; one value per row)
    LoadRows,  ///< dst (a row vector, state) = global[coords]: one value per row (setup)
  };
  Kind kind = Kind::Assign;
  unsigned dst = 0;
  Elementwise expr;
  Reduce reduce = Reduce::Sum; ///< RowReduce
  int64_t cols = 0;            ///< RowReduce: columns reduced; StoreTile: columns stored
  std::optional<ColumnBound> reduceBound;
  /// RowReduce: each lane keeps its share of the sum, the quad's lanes not combined
  /// (partial-row-sums).
  bool laneShares = false;
  MmaOperand a, b;
  /// Mma: dst += a @ b. StoreTile: the tile is added into the global (`+=`).
  bool accumulate = false;
  /// Mma that accumulates: except at a task's first stage, whose product overwrites the
  /// accumulator instead (first-product-overwrites, which removed the accumulator's zeroing).
  bool firstStageOverwrites = false;
  /// Mma: the ops that follow it which run while it is in flight: its wait comes after
  /// them (overlap-row-sums, batch-products). None of them reads or writes its result or
  /// writes a register operand it reads; wgmma groups retire in order, so the emitter
  /// waits once for every product needed at an op.
  unsigned shadow = 0;
  /// AddGlobal: the global is a vector along the columns, broadcast down the rows.
  bool perColumn = false;
  /// Assign (fuse-elementwise): the next op, a row sum of `dst`, runs in the same pass
  /// over the elements; with `writesOperand` that pass writes the bf16 register operand
  /// of compute's product instead of `dst`, which then exists in f32 only for a partial tile.
  bool fusedRowSum = false;
  bool writesOperand = false;
  /// Assign `x = where(c, a, x)` with `c` affine in the position (fuse-elementwise): skipped
  /// in a warp whose slice `c` leaves untouched, decided at its four corners.
  bool skipUntouched = false;
  /// Assign `x = x * r` (r a row vector) (fuse-elementwise): skipped in a warp where r is 1
  /// in every row.
  std::optional<unsigned> skipUnitFactor;
  /// LoadTile: the warpgroup tile; StoreTile in finish: the staging warpgroup tile, or
  /// warpgroupTiles.size() for the finish block; StoreTile in compute: its StagingTile.
  unsigned tile = 0;
  unsigned global = 0; ///< AddGlobal, LoadTile, StoreTile, StoreRows
  std::vector<Coord> coords;
  SourceLoc loc;
};

/// Where an op lies: which body of the program.
enum class Body { Setup, Compute, Finish };
const char *spelling(Body body);

struct Program {
  std::vector<RegValue> values;
  std::vector<ProgramOp> setup, compute, finish;
  std::vector<ProgramOp> &body(Body b) {
    return b == Body::Setup ? setup : b == Body::Compute ? compute : finish;
  }
  const std::vector<ProgramOp> &body(Body b) const {
    return b == Body::Setup ? setup : b == Body::Compute ? compute : finish;
  }
  /// Column bounds that the program's own mask keeps (drop-masked-bounds):
  /// every reader already sees its identity past them in each stored row, so
  /// no value or op carries them and no partial-tile code is emitted.
  std::vector<ColumnBound> maskedBounds;
};

/// A launch size added to a loop's stop or start (`N - M`: rows aligned to the loop size's end).
struct SizeTerm {
  bool negative = false;
  std::string size;
};
/// ` + N - M` for the terms (empty for none); `spell` spells each size.
std::string sizeTermsText(const std::vector<SizeTerm> &terms,
                          const std::function<std::string(const std::string &)> &spell);

/// The loop of one task: `extent / step` iterations, where `extent` is a
/// launch size, or `min(size, step_of_task * (task + 1))` for a loop that
/// stops at the task's last row (causal attention).
struct LoopBound {
  /// Empty: the loop runs over the whole size. Otherwise the loop stops at
  /// element `(stopVar + 1) * stopStep + shift` (exclusive; with `stopScalar`, plus
  /// ceil(scalar) - 1), never below 0.
  std::string stopVar;
  int64_t stopStep = 0;
  /// Written `min(size, row(task) + 1 + N - M)`: launch sizes that move every row's stop
  /// (the rows of one size aligned to the end of another's: bottom-right causal attention).
  std::vector<SizeTerm> shift;
  /// Written `min(size, row(task) + 1)`: each row needs the loop's elements
  /// up to itself only, so each consumer warpgroup also stops after its own
  /// last row (the producer still loads up to the task's).
  bool perRow = false;
  /// Written `start: {LOOP: row(var) + SHIFT - WINDOW + OFFSET}`: a task needs
  /// the loop's elements from max(0, floor(first row + SHIFT - WINDOW + OFFSET)) on
  /// only, so its loop begins at the tile holding that element. `var` is the index the loop
  /// stops at, or, on a loop over its whole size, any task index (its loop then keeps at
  /// least its last tile).
  struct Start {
    std::string var;             ///< the task index whose rows it reads
    int64_t step = 0;            ///< that index's step (its task's rows)
    std::string scalar;          ///< WINDOW as a launcher scalar, or empty
    int64_t constant = 0;        ///< WINDOW as an integer (when `scalar` is empty)
    int64_t offset = 0;          ///< OFFSET
    std::vector<SizeTerm> shift; ///< launch sizes added: `row(i) + N - M - window + 1`
    /// What follows `row(TASK)`, as written back: ` - window + 1`, ` + N - M - 300 - 2`.
    std::string str() const;
  };
  std::optional<Start> start;
  /// Written `min(size, row(task) + SCALAR + SHIFT)`: row r needs the loop's elements below
  /// r + SCALAR + SHIFT, SCALAR a launcher scalar (a sliding window's width, the backward's
  /// queries after each key): the stop is the last row + ceil(SCALAR) + SHIFT. Empty: the
  /// row form's `+ 1`.
  std::string stopScalar = {};
};

/// `sequences: {T: offsets}`: launch size T is sequences packed end to end, split at the S
/// offsets of the 1-D i32 global `offsets` (S - 1 sequences; offsets[0] = 0, nondecreasing,
/// offsets[S - 1] = T). The task index over T numbers the tiles of every sequence together,
/// sequence s's from floor(offsets[s] / step) + s on (some numbers fall past a sequence's end:
/// such a task does nothing). Within a task T is its sequence's length, positions along T
/// count from the sequence's first element, tiles along T are moved from and to the
/// sequence's own elements, and rows past its end are not stored.
struct Sequences {
  std::string size;    ///< T
  unsigned global = 0; ///< offsets
  std::string count;   ///< S, the size of `offsets`
  std::string task;    ///< the task index over T
  int64_t step = 0;    ///< its step (a task's rows)
  SourceLoc loc;
};

struct Kernel;

/// What a name the generated C++ cannot take is renamed to: this prefix and the name
/// (tkc::mangleReservedNames); no spec can write it.
inline constexpr llvm::StringLiteral kRenamedPrefix = "tkc_u_";
/// `text` with every renamed name spelt as the spec wrote it (for messages, the IR dump,
/// the manifest and the launchers' error strings).
std::string specSpelling(llvm::StringRef text);

/// `tail: {LOOP: T}` (LoopTail): a task's loop over its whole size may end in
/// tiles of T elements instead of the step, chosen by the launcher so that the
/// tiles cover the size with as little computed past its end as possible
/// (tkc::runtime::coverWithTail). A tail stage is loaded into a full stage's
/// slot, starting at its element, and computed by `kernel`'s compute: the same
/// instantiation lowered and planned at step T (its setup, finish and state
/// equal this kernel's).
struct LoopTail {
  int64_t step = 0;
  SourceLoc loc;
  std::shared_ptr<const Kernel> kernel; ///< set once lowered (attachLoopTail)
};

/// How a block's rounds of tasks map to task indices (schedule-tasks).
enum class TaskOrder {
  Grouped,  ///< two task indices as tiles of an output, `groupRows` rows of tiles at a time
            ///< (kittens::grouped_tiles), so that neighbouring blocks share operands in L2
  Rotated,  ///< the last task index fastest, each round shifted by one block
            ///< (kittens::rotated_task)
  ByLength, ///< tasks whose loop stops at their rows: paired, head-major or longest first,
            ///< chosen at run time from the stopping index's count (the counts below); or
            ///< starts at them (a loop over its whole size): rotated or longest first
};

/// Where a task's first stage lies in the ring (kittens' RING_START).
enum class RingStart {
  First,    ///< slot 0 (the template's default)
  SkipLast, ///< slot 0, or slot 1 where the previous task just ended at slot 0
  Continue, ///< where the previous task stopped
};

/// Numbers the passes choose. Zero means "not planned yet".
struct Plan {
  int stages = 0;
  int stageBytes = 0;  ///< one stage: exactly the TMA bytes of its tiles
  int finishBytes = 0; ///< the epilogue's staging tiles
  /// split-finish: the state tile `resultValue` is kept in this many column parts (0: not
  /// in parts; 2), each staged and stored on its own through a finish block of one part.
  int resultParts = 0;
  unsigned resultValue = 0;
  /// With two parts: each task's last this many stages compute the left part first and the
  /// right part after, so that the left part is stored while the right part's products run.
  int splitStages = 0;
  int safeStages = 0; ///< stages wholly before the finish block
  int dynamicSharedBytes = 0;
  int producerRegisters = 0, consumerRegisters = 0;
  int liveRegisters = 0; ///< per consumer thread, at the program's busiest op (check-registers)
  int producerArrivals = 0, consumerArrivals = 0;
  int expectBytes = 0;               ///< bytes the producer arms per stage
  std::vector<int> finishBarrierIds; ///< one named barrier per consumer warpgroup
  /// A named barrier of every consumer thread (0: none): a product staging a register operand
  /// waits at it for every warpgroup's copy (OperandStaging).
  int consumersBarrierId = 0;
  int operandStagingBytes = 0; ///< the operand stagings of one ring slot (in scratch)
  int scratchBytes = 0;        ///< warpgroup tiles, outside the stage ring
  int setupBuffers = 0;        ///< warpgroup tile copies (2: loaded a task ahead)
  int setupBytes = 0;          ///< bytes each warpgroup's setup loads arm
  /// The loop stops at the task's rows (LoopBound::stopVar), and the tasks of
  /// that index end at its size: the last task is whole and the first takes
  /// the 64-row blocks left over, its leading warpgroups lying before row 0
  /// (idle). A partial task is then the shortest of a head, not the longest.
  bool rowsFromEnd = false;

  // schedule-tasks
  bool scheduled = false; ///< set by schedule-tasks
  TaskOrder taskOrder = TaskOrder::Rotated;
  int groupRows = 0; ///< Grouped: tile rows per group
  /// ByLength: with a count of the stopping index in [pairedMinCount, pairedMaxCount] the
  /// paired order (pairedMaxCount 0: never), else up to headMajorMaxCount (0: never) a
  /// head's tasks together, else longest first.
  int pairedMinCount = 0, pairedMaxCount = 0, headMajorMaxCount = 0;
  /// ByLength of a loop over its whole size that starts at the task's rows: with a count
  /// of the starting index in [pairedMinCount, pairedMaxCount] the paired order, else up to
  /// this count the rotated order, else longest first.
  int rotatedMaxCount = 0;
  /// The consumer warpgroups take the task's 64-row blocks in turn, task by task.
  bool rotateRowBlocks = false;
  RingStart ringStart = RingStart::First;
  /// Each consumer warpgroup has a finish block of its own (kittens' FINISH_PER_WARPGROUP).
  bool finishPerWarpgroup = false;
  /// Task 0's first stages loaded by thread 0 before the block-wide barrier (EARLY_STAGES).
  int earlyStages = 0;
  /// The TMA descriptors prefetched at each block's entry (kittens' block_entry).
  bool prefetchDescriptors = false;
};

/// A launcher that chooses one of several kernels at each call (`select:`).
/// The kernels it chooses between share it, each with the condition under
/// which it runs.
struct Entry {
  std::string name;    ///< the launcher the header declares
  std::string written; ///< its selections as the spec writes them (`wide: N >= 8192`)
  /// C++ over the launcher's sizes under which it runs this kernel; empty:
  /// always (the only kernel it has left, or the last one it tries).
  std::string condition;
  std::vector<std::string> sizes;    ///< the sizes the condition reads
  std::vector<std::string> selected; ///< every parameter the spec selects
  /// Those whose condition depends on the sizes here (the others are settled
  /// for this launcher); its kernels' names spell out their values.
  std::vector<std::string> choices;
  SourceLoc loc; ///< the spec's first selection
};

struct Kernel {
  std::string specName;
  std::string specFile;
  std::string name;                                        ///< the instantiation's C++ name
  std::vector<std::pair<std::string, std::string>> params; ///< name, value
  /// Set when the spec selects parameters at launch: the launcher that runs
  /// this kernel (its own is then internal to the .cu).
  std::optional<Entry> entry;
  const ArchInfo *arch = nullptr;

  std::vector<Global> globals;
  std::vector<Scalar> scalars;           ///< launcher arguments after the sizes, in order
  std::vector<Requirement> requirements; ///< `requires:`, all must hold
  std::vector<TaskRead> taskReads;
  std::vector<ColumnRead> columnReads;
  std::vector<StageTile> stageTiles;
  std::vector<IterVar> tasks;
  IterVar loop;
  /// `order: grouped` (or no `order` with two task indices): the tasks are an
  /// output's tiles, to be walked in groups of rows (schedule-tasks decides).
  bool groupedOrder = true;
  /// `loop_order: alternate`: a block's odd tasks walk the loop backward
  /// (kittens::alternating_iter), so that a task begins on the slices the
  /// previous round of tasks read last. Only where the loop index is read by
  /// the producer's loads alone.
  bool alternateLoop = false;
  int consumerWarpgroups = 1;
  std::optional<spec::StageCount> requestedStages;

  std::vector<Load> loads;
  std::vector<WarpgroupTile> warpgroupTiles;
  std::vector<StagingTile> stagingTiles;       ///< stores in compute (StoreTile there)
  std::vector<OperandStaging> operandStagings; ///< transposed register operands (compute)
  std::optional<Sequences> sequences;
  LoopBound loopBound;
  std::optional<LoopTail> loopTail;
  /// Lowered as another kernel's loop tail: only its compute is used, inside that
  /// kernel's struct, so its setup, finish and state must stay that kernel's.
  bool isTail = false;
  /// Set when the program keeps columns past a size absent (ColumnBound): the
  /// same kernel without that code, for the sizes where every tile it loads
  /// lies wholly inside them (attachWholeTiles). Its launcher runs it there.
  std::shared_ptr<const Kernel> wholeTiles;
  bool wantsWholeTiles = true; ///< the spec's `whole_tiles` (default true)
  Program program;

  Plan plan;
};

/// The size symbols a kernel's launcher takes, in order: those the task
/// indices run over, the loop's, then the rest in order of appearance in the
/// globals. Shared by the CUDA and manifest emitters, so that the launcher and
/// its description cannot disagree.
std::vector<std::string> launchSizeSymbols(const Kernel &kernel);

/// 32-bit registers each consumer thread holds for a stage tile read as numbers (its warp's
/// 16 rows in 16-bit pairs, all compute long) and for a global read per column (the lane's
/// quarter of the stage's columns, f32 or 16-bit pairs, from compute's first reader to its
/// last). Shared by the register model and its notes.
int stageReadRegisters(const StageTile &tile);
int columnReadRegisters(const Kernel &kernel, const ColumnRead &read);
/// Bytes of a global read per column in each stage: the loop's step of its elements.
int columnReadStageBytes(const Kernel &kernel, const ColumnRead &read);
/// Arrivals on a stage's semaphore from the producer's second warp, which copies the columns
/// read per column into the stage (one a lane; 0 without such reads).
inline constexpr int kColumnCopyArrivals = 32;

/// The compute ops that read the global read per column `read` (Kernel::columnReads): the
/// first and the last; none when compute does not read it.
struct OpSpan {
  size_t first = 0, last = 0;
};
std::optional<OpSpan> columnReadReaders(const Program &program, unsigned read);
/// Where compute holds that read in registers: loaded from the stage before op `first`, its
/// first reader, and read last by op `last`; none when compute does not read it or reads it
/// in place (ColumnRead::inPlace). Shared by the register model and the emitter.
std::optional<OpSpan> columnReadSpan(const Kernel &kernel, unsigned read);

/// The stage tiles compute reads as numbers (StageRead), in order.
std::vector<unsigned> stageTilesRead(const Program &program);

/// Whether dimension `d` of global `g` runs along the sequences' size (Sequences): its
/// coordinates count from the task's sequence's first element.
bool alongSequences(const Kernel &kernel, const Global &g, size_t d);

/// Whether the kernel adds into global `g` (a `+=` store): it reads what is there.
bool addsIntoGlobal(const Kernel &kernel, unsigned g);

/// Whether the kernel writes global `g` (a store of its program): its launcher
/// takes that pointer non-const.
bool writesGlobal(const Kernel &kernel, unsigned g);

/// How a kernel uses one of its globals; each global has one use (the lowering
/// refuses a second).
enum class GlobalRole {
  Unused,
  TmaLoad,   ///< loaded as tiles by TMA (stage tiles, per-warpgroup tiles)
  TmaStore,  ///< stored as tiles by TMA (or, along sequences, by the warpgroup's threads)
  Offsets,   ///< the offsets of `sequences:`, read by every task's common setup
  AddColumn, ///< read by an AddGlobal as a vector along the columns
  AddTile,   ///< read by an AddGlobal as a tile
  Rows,      ///< stored one value per row
  Read,      ///< read as numbers, one per task (TaskRead) or one per row (LoadRows)
};
GlobalRole globalRole(const Kernel &kernel, unsigned g);

/// Calls f(body, op) for every op of the program, in order: setup, compute, finish.
template <class P, class F> void forEachOp(P &program, F f) {
  for (Body b : {Body::Setup, Body::Compute, Body::Finish})
    for (auto &op : program.body(b))
      f(b, op);
}

/// Calls f(e) for `e` and every expression under it, parents first (const or not).
template <class E, class F> void walk(E &e, F f) {
  f(e);
  for (auto &operand : e.operands)
    walk(operand, f);
}

/// Whether `pred` holds for `e` or any expression under it.
template <class F> bool anyOf(const Elementwise &e, F pred) {
  if (pred(e))
    return true;
  for (const Elementwise &operand : e.operands)
    if (anyOf(operand, pred))
      return true;
  return false;
}

/// Rewrites `e` bottom-up: each operand first (its own operands before it),
/// then calls f(e), which may replace `e` in place; a replacement is not
/// visited again.
template <class F> void rewrite(Elementwise &e, F f) {
  for (Elementwise &operand : e.operands)
    rewrite(operand, f);
  f(e);
}

/// The task index the loop stops at (LoopBound::stopVar); the kernel must have one.
const IterVar &stopTask(const Kernel &kernel);

/// Threads of a warpgroup.
inline constexpr int kWarpgroupThreads = 128;

/// 32-bit registers each consumer thread holds of register value `v` when the
/// kernel has `consumerWarpgroups` consumer warpgroups (a row vector holds two
/// rows per thread, as a pair). Shared by the register budget and the emitter.
int valueRegisters(const RegValue &v, int consumerWarpgroups);

/// The register values `op` reads: its expression's, and a product's register
/// operands and (when it accumulates) its accumulator. May repeat a value.
std::vector<unsigned> valuesRead(const ProgramOp &op);

/// Whether `op` assigns register value `value` (an Assign, RowReduce or Mma into it).
bool writesValue(const ProgramOp &op, unsigned value);

/// Whether `op` must wait for product `mma` in flight before it runs: it reads or writes
/// the product's result or writes a register operand the product reads.
bool needsProduct(const ProgramOp &op, const ProgramOp &mma);

/// The wgmma groups product `mma` commits: one a call (one a warpgroup's tile for a
/// staged operand, one a part for a result in parts).
int productGroups(const Kernel &kernel, const ProgramOp &mma);

/// A product's register left operand (as is, or staged for a transposed one) is the bf16
/// copy of an f32 value; the first product of the value makes the copy, and a later one
/// reads it while the value is not written between them. For product `ops[at]`: the index
/// of the earlier product in `ops` whose copy it reads, or none where it makes its own.
std::optional<size_t> operandCopySource(const Kernel &kernel, llvm::ArrayRef<ProgramOp> ops,
                                        size_t at);

/// The dimension of its tile that coordinate `d` of `load` addresses: 0 rows,
/// 1 columns (the tile spans the global's last two dimensions), or -1 for a
/// leading dimension the tile does not span.
int spannedTileDim(const Load &load, size_t d);

/// Attaches `tail`, this kernel lowered and planned at the tail's step, to
/// kernel.loopTail. That it differs from the kernel only in compute is an
/// invariant (checked: an internal error otherwise).
void attachLoopTail(Kernel &kernel, Kernel tail);

/// The distinct column bounds of `kernel`'s program and its loop tail's that
/// cost code (a reduction's, a product's register operand's): the sizes whose
/// partial last tiles the program's code handles.
std::vector<ColumnBound> columnBounds(const Kernel &kernel);

/// Removes `bound` from every value and op of `program` that carries it.
void dropColumnBound(Program &program, const ColumnBound &bound);

/// The sizes a kernel's `_whole` copy (attachWholeTiles) needs no tile to cross: its column
/// bounds, and the bounds its program's own mask keeps where compute masks the columns past
/// them (`where(col(j) >= N, -inf, s)`), each loop tail's included.
std::vector<ColumnBound> wholeTileBounds(const Kernel &kernel);

/// When the kernel has column bounds, or masks of the columns past a size that its program's
/// own mask keeps (`where(col(j) >= N, -inf, s)`), attaches to kernel.wholeTiles a copy
/// named `<name>_whole` whose program (and loop tail's) has neither: where no
/// tile crosses its size, the copy computes the same without the code for
/// partial tiles, which costs the full tiles' loop even where it never runs.
void attachWholeTiles(Kernel &kernel);

/// The program part of printKernel.
void printProgram(const Kernel &kernel, llvm::raw_ostream &os);

/// Deterministic text of `kernel` (what --emit=ir and --print-after-all print).
void printKernel(const Kernel &kernel, llvm::raw_ostream &os);

/// Structural invariants between lowering and passes; a failure is an
/// internal error (InternalError), never a user error.
void verifyKernel(const Kernel &kernel);

} // namespace tkc::ir
