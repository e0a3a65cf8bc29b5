//===- SpecAST.h - The located spec AST -------------------------*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The spec as the parser understood it: every declaration and every value
/// keeps the source location it came from. The parser guarantees the schema
/// (known keys, value kinds, value ranges, required keys present) and the
/// syntax of stage bodies; names are not resolved here.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/SourceManager.h"
#include "tkc/dsl/StmtAST.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tkc::spec {

/// A value with the location it was written at.
template <typename T> struct Located {
  T value{};
  SourceLoc loc;
};

/// I32: integers a kernel reads as numbers or offsets (`cu_seqlens`), never tiles.
/// F8E4M3, F8E5M2: 8-bit floats, shared operands of '@' only (both K-major).
enum class DType { BF16, F16, F32, I32, F8E4M3, F8E5M2 };
enum class MemSpace { Shared, Register };
enum class Template { LCF };

/// The spelling a spec uses for each enumerator.
const char *spelling(DType dtype);
/// The dtype a spec spells `text` (`bf16`, `f16`, `f32`), if any.
std::optional<DType> dtypeNamed(llvm::StringRef text);
/// An 8-bit float (f8e4m3, f8e5m2).
inline bool isFp8(DType dtype) { return dtype == DType::F8E4M3 || dtype == DType::F8E5M2; }
const char *spelling(MemSpace space);
const char *spelling(Template tmpl);

/// One extent of a global's dims or a tile's shape: a number or a name
/// (a parameter or a size bound at launch).
struct Extent {
  std::optional<int64_t> number;
  std::string name;
  SourceLoc loc;

  bool isNumber() const { return number.has_value(); }
};

struct ParamValue {
  enum class Kind { Int, Float, Bool, Name };
  Kind kind = Kind::Int;
  /// The value as written (e.g. "128", "true", "0.125", "none").
  std::string text;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  SourceLoc loc;
};

/// `params: {NAME: [v1, v2, ...]}`: the spec is instantiated once for each
/// combination of values.
struct ParamDecl {
  Located<std::string> name;
  std::vector<ParamValue> values;
};

/// `globals: {NAME: {dtype, dims}}`: a tensor in global memory.
struct GlobalDecl {
  Located<std::string> name;
  Located<DType> dtype;
  /// `dtype: "f16 if half else bf16"`: chosen per instantiation (each branch a dtype's
  /// name; `dtype` then holds the first). Null: `dtype` as written.
  std::unique_ptr<stmt::Expr> dtypeChoice;
  std::vector<Extent> dims;
  /// `when: COND`: the global exists only in instantiations where the
  /// parameter expression COND holds. Null: always.
  std::unique_ptr<stmt::Expr> when;
  /// `layout: [B, N, H, D]`: the dims in the order memory holds them, outermost first,
  /// where it differs from the order the kernel indexes them in. Empty: as `dims`.
  std::vector<Extent> layout = {};
  SourceLoc layoutLoc = {};
};

/// `select: {NAME: COND}`: boolean parameter NAME is not a name suffix of
/// the launchers but chosen by one launcher at each call: true where COND, an
/// expression of parameters, sizes and integers, holds for the call's sizes.
struct SelectDecl {
  Located<std::string> param;
  std::unique_ptr<stmt::Expr> cond;
};

/// `stages:` is a number or `auto` (the compiler chooses from the budget).
/// `constants: {NAME: EXPR}`: a number computed from the parameters of each
/// instantiation, usable wherever an integer parameter is (tile shapes,
/// grid steps, state types).
struct ConstantDecl {
  Located<std::string> name;
  std::unique_ptr<stmt::Expr> value;
};

/// A runtime scalar the launcher takes by value (`scalars:`).
struct ScalarDecl {
  Located<std::string> name;
  Located<DType> dtype;
  /// `default: EXPR`, an expression of parameters and numbers; null: none.
  std::unique_ptr<stmt::Expr> defaultValue;
  /// `check: COND`, comparisons of the scalar with numbers joined by `and`,
  /// which the launcher enforces; null: none.
  std::unique_ptr<stmt::Expr> check;
};

struct StageCount {
  bool isAuto = true;
  int64_t count = 0;
  SourceLoc loc;
};

/// `tiles: {NAME: {...}}`: a tile in shared memory or registers.
struct TileDecl {
  Located<std::string> name;
  Located<MemSpace> space;
  Located<DType> dtype;
  std::unique_ptr<stmt::Expr> dtypeChoice; ///< as for globals
  std::vector<Extent> shape;
  std::optional<StageCount> stages;
  /// `of: [k, v]`: one tile of this shape for each listed name.
  std::vector<Located<std::string>> of;
  /// `per: NAME`: who owns a copy (e.g. `consumer_warpgroup`).
  std::optional<Located<std::string>> per;
  std::optional<Located<int64_t>> count;
  /// As for globals.
  std::unique_ptr<stmt::Expr> when;
};

/// `NAME: EXTENT` in `grid`: an index that runs over 0 .. ceil(EXTENT)-1.
struct IterVar {
  Located<std::string> name;
  std::unique_ptr<stmt::Expr> extent;
};

/// `grid:`: how the work is cut into tasks (one output tile each) and which
/// index the producer/consumer pipeline runs over within a task.
struct GridDecl {
  SourceLoc loc;
  std::vector<IterVar> tasks;
  std::vector<IterVar> loop;
  /// `start: {j: EXPR}`: the first element of the loop's size a task needs
  /// (the loop begins at the tile holding it); `extent` holds EXPR. Optional.
  std::vector<IterVar> start;
  /// `tail: {j: EXPR}`: tiles of EXPR elements (fewer than the loop's step) may end
  /// the loop, so that a task computes less past the end of its size. Optional.
  std::vector<IterVar> tail;
  /// `sequences: {T: OFFSETS}`: size T is sequences packed end to end, split at the
  /// offsets the 1-D global OFFSETS holds (`extent` names it). Optional.
  std::vector<IterVar> sequences;
  /// `whole_tiles: COND`: whether tkc also compiles the kernel without the code
  /// for a partial last tile, for the sizes no tile crosses. Optional (true).
  std::unique_ptr<stmt::Expr> wholeTiles;
  /// `order: grouped` (L2-friendly) or `order: linear`.
  std::optional<Located<std::string>> order;
  /// `loop_order: forward` (every task walks its loop from the first tile) or
  /// `loop_order: alternate` (a block's odd tasks walk theirs backward). Optional.
  std::optional<Located<std::string>> loopOrder;
  /// `last_wave: whole`: every task a whole tile, as without it (`stream_k` is refused
  /// where it is written). Optional.
  std::optional<Located<std::string>> lastWave;
};

/// A statement body such as `compute: |`, parsed into statements.
struct StageBody {
  Located<std::string> name;
  std::string text;
  /// Where the text starts in the spec (the block indicator for `|`).
  SourceLoc textLoc;
  std::vector<stmt::Stmt> stmts;
};

/// `state: {NAME: TYPE}`: consumer registers that live across stages.
struct StateDecl {
  Located<std::string> name;
  Located<std::string> type;
};

struct ProducerDecl {
  SourceLoc loc;
  std::optional<Located<int64_t>> warpgroups;
  std::optional<StageBody> load;
};

struct ConsumerDecl {
  SourceLoc loc;
  std::optional<Located<int64_t>> warpgroups;
  /// `warpgroups: NAME`: an integer constant or parameter, resolved per
  /// instantiation (then `warpgroups` is unset).
  std::optional<Located<std::string>> warpgroupsName;
  std::vector<StateDecl> state;
  std::optional<StageBody> setup;
  std::optional<StageBody> compute;
  std::optional<StageBody> finish;
};

/// The whole spec: one kernel (instantiated once per parameter combination).
struct KernelSpec {
  std::string fileName;
  Located<std::string> name;
  std::optional<Located<std::string>> arch;
  Located<Template> tmpl;
  std::vector<ParamDecl> params;
  std::vector<SelectDecl> selects;
  std::vector<ConstantDecl> constants;
  std::vector<GlobalDecl> globals;
  std::vector<ScalarDecl> scalars;
  /// `requires: COND`: comparisons of sizes joined by `and`, which every launcher checks;
  /// null: none.
  std::unique_ptr<stmt::Expr> requirements;
  std::vector<TileDecl> tiles;
  std::optional<GridDecl> grid;
  ProducerDecl producer;
  ConsumerDecl consumer;
};

} // namespace tkc::spec
