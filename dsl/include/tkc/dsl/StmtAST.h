//===- StmtAST.h - The tile-expression statements of stage bodies -*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Stage bodies (`load`, `setup`, `compute`, `finish`) are short programs in a
/// small tile-expression language close to PyTorch:
///
///   s = q @ k.T * scale
///   acc += a @ b
///   C[m, n] = gelu(acc + bias[n])
///
/// This header holds their syntax tree. Every node is located in the spec.
/// Names are not resolved here.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/SourceManager.h"

#include <memory>
#include <string>
#include <vector>

namespace tkc::stmt {

/// Longest name a spec may use (declared or in a statement): far more than a
/// kernel needs, and short enough that every name costs little to compare,
/// suggest and print.
inline constexpr size_t kMaxNameLength = 128;

struct Expr {
  enum class Kind {
    Name,     ///< `acc`; text is the name
    Number,   ///< `0.125`, `64`; text is the literal
    Ellipsis, ///< `...` inside an index
    Unary,    ///< `-x`, `not c`; text is the operator
    Binary,   ///< `a @ b`; text is the operator; operands are lhs, rhs
    Call,     ///< `exp2(x)`; text is the callee; operands are the arguments
    Index,    ///< `A[m, k]`; operands are the base, then the indices
    Member,   ///< `k.T`; text is the member; operands[0] is the base
    /// `a if c else b` (grid extents and other standalone expressions only);
    /// operands are the condition, then a, then b.
    Conditional,
  };

  Kind kind;
  std::string text;
  std::vector<std::unique_ptr<Expr>> operands;
  SourceLoc loc;
  /// Levels of expressions from this one down to its deepest leaf (1 for a
  /// leaf). The parser bounds it, so that every recursion over an expression,
  /// in the parser and after it, is bounded too.
  unsigned depth = 1;
  /// The operations (nodes that are not leaves) from this one down; the
  /// parser bounds them per statement, so that the CUDA of one statement
  /// stays small enough for ptxas to keep in registers.
  unsigned operations = 0;
};

struct Stmt {
  /// `=`, `+=`, `-=`, `*=`, `/=`, or empty for an expression statement
  /// such as `mask(s, causal)`.
  std::string op;
  /// Null for an expression statement.
  std::unique_ptr<Expr> target;
  std::unique_ptr<Expr> value;
  /// `... if cond`: the statement is kept only where `cond`, an expression
  /// of parameters, holds. Null when unguarded.
  std::unique_ptr<Expr> guard;
  SourceLoc loc;
};

} // namespace tkc::stmt
