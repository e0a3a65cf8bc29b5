//===- Format.cpp - clang-format for generated CUDA -----------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/Format.h"

#include <algorithm>

#include "clang/Format/Format.h"
#include "clang/Tooling/Core/Replacement.h"

namespace tkc {

namespace {

/// tkc's style. Every option that matters is spelled out here so that the
/// output does not drift with a .clang-format file or a default elsewhere.
clang::format::FormatStyle getTkcStyle() {
  using clang::format::FormatStyle;
  FormatStyle style = clang::format::getLLVMStyle(FormatStyle::LK_Cpp);
  style.Standard = FormatStyle::LS_Cpp20;
  style.ColumnLimit = 100;
  style.DerivePointerAlignment = false;
  style.PointerAlignment = FormatStyle::PAS_Right;
  style.ReferenceAlignment = FormatStyle::RAS_Pointer;
  // The emitter orders includes on purpose (kittens before what uses it).
  style.SortIncludes = FormatStyle::SI_Never;
  style.IncludeStyle.IncludeBlocks = clang::tooling::IncludeStyle::IBS_Preserve;
  style.FixNamespaceComments = true;
  style.MaxEmptyLinesToKeep = 1;
  style.KeepEmptyLinesAtTheStartOfBlocks = false;
  return style;
}

} // namespace

llvm::Expected<std::string> formatCuda(llvm::StringRef code, llvm::StringRef fileName) {
  static const clang::format::FormatStyle style = getTkcStyle();
  clang::format::FormattingAttemptStatus status;
  clang::tooling::Replacements replacements = clang::format::reformat(
      style, code, {clang::tooling::Range(0, code.size())}, fileName, &status);
  if (!status.FormatComplete)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot format '%s': malformed code at line %u",
                                   fileName.str().c_str(), status.Line);
  return clang::tooling::applyAllReplacements(code, replacements);
}

unsigned deepestParentheses(llvm::StringRef code) {
  unsigned deepest = 0, depth = 0;
  for (char c : code) {
    if (c == '(')
      deepest = std::max(deepest, ++depth);
    else if (c == ')' && depth > 0)
      --depth;
    else if (c == '\n')
      depth = 0;
  }
  return deepest;
}

} // namespace tkc
