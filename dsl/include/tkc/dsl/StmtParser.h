//===- StmtParser.h - Parse stage bodies ------------------------*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

namespace tkc {

/// Parses `body.text` into `body.stmts`, locating every token in the spec.
///
/// Statements are separated by newlines or ';'; inside parentheses and
/// brackets newlines are ignored; '#' starts a comment. Reports the first
/// syntax error of the body and returns false.
bool parseStatements(spec::StageBody &body, DiagnosticEngine &diags);

/// Parses `text`, written at `loc` in the spec, as one expression (e.g. the
/// extent `M / 128` or the condition `not transpose_b`). `what` names the
/// value in messages. Returns nullptr after reporting an error.
std::unique_ptr<stmt::Expr> parseExpression(llvm::StringRef text, SourceLoc loc,
                                            llvm::StringRef what, DiagnosticEngine &diags);

} // namespace tkc
