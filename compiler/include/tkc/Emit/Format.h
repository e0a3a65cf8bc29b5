//===- Format.h - clang-format for generated CUDA ---------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reformats generated CUDA C++ with Clang 14's libFormat and a style that is
/// built into tkc (never read from a .clang-format file), so the same input
/// gives the same output on every machine: LLVM-based, C++20, 100 columns,
/// `T *p`, includes left in the order the emitter wrote them.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tkc {

/// Returns `code` reformatted with tkc's built-in style. `fileName` names the
/// code in error messages only. Fails when libFormat gives up on part of
/// `code` (e.g. an unclosed parenthesis), which for generated code means a
/// bug in the emitter: callers report the error as an internal error. It is
/// not a syntax check: libFormat formats some broken code (an unclosed brace)
/// without complaint.
llvm::Expected<std::string> formatCuda(llvm::StringRef code, llvm::StringRef fileName);

/// The deepest nesting of parentheses on any line of `code`. libFormat's time
/// grows steeply with it (a line nested 9 deep takes about a second, 13 deep
/// four): callers leave code nested deeper than kMaxFormattedNesting unformatted.
unsigned deepestParentheses(llvm::StringRef code);
inline constexpr unsigned kMaxFormattedNesting = 8;

} // namespace tkc
