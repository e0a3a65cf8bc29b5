//===- SpecPrinter.h - Deterministic AST dump -------------------*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/SpecAST.h"

#include "llvm/Support/raw_ostream.h"

namespace tkc {

/// Prints `spec` as an indented tree, one node per line, each with its
/// `@line:col`. The output depends only on the spec (what `--emit=ast`
/// prints and the AST lit tests pin).
void printSpec(const spec::KernelSpec &spec, llvm::raw_ostream &os);

} // namespace tkc
