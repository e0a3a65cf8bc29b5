//===- Diagnostics.h - Located diagnostics ----------------------*- C++ -*-===//
//
// Part of tkc. See docs/Diagnostics.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The diagnostic engine: every user-facing message is reported through it by
/// id (the texts live in Diagnostics.def) and printed as
/// `file:line:col: error: message`, followed by the source line and a caret.
/// Notes attach to the error or warning reported just before them. After
/// `errorLimit` errors the engine reports that it stops and drops the rest.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/SourceManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <functional>

#include <string>
#include <system_error>

namespace tkc {

enum class DiagKind { Error, Warning, Note };

enum class DiagID : unsigned {
#define DIAG(ID, KIND, TEXT) ID,
#include "tkc/dsl/Diagnostics.def"
};

/// Static facts about one table entry.
struct DiagInfo {
  llvm::StringRef name;
  DiagKind kind;
  llvm::StringRef text;
};

/// `ec`'s message in the style of our diagnostics (lowercase first letter),
/// e.g. "no such file or directory".
std::string describeError(std::error_code ec);

/// The table entry for `id`.
const DiagInfo &getDiagInfo(DiagID id);

/// Every table entry, in table order.
llvm::ArrayRef<DiagInfo> getAllDiagInfos();

class DiagnosticEngine {
public:
  /// Errors past this many are dropped after one "too many errors" message.
  static constexpr unsigned kDefaultErrorLimit = 20;

  DiagnosticEngine(SourceManager &sourceMgr, llvm::raw_ostream &os,
                   unsigned errorLimit = kDefaultErrorLimit);

  /// Reports `id` at `loc`, formatting the table text with `args`. An invalid
  /// `loc` prints `tkc: error: message` without a snippet.
  template <typename... Args> void report(DiagID id, SourceLoc loc, const Args &...args) {
    emit(id, loc, fmt::vformat(getDiagInfo(id).text.str(), fmt::make_format_args(args...)));
  }

  unsigned getNumErrors() const { return numErrors; }
  unsigned getNumWarnings() const { return numWarnings; }
  bool hasErrors() const { return numErrors != 0; }

  /// True once the error limit is reached: callers may stop early.
  bool shouldStop() const { return limitReached; }

  /// 0 means no limit.
  void setErrorLimit(unsigned limit) { errorLimit = limit; }

  /// Applied to every message before it is printed (the driver shows renamed names as the
  /// spec wrote them).
  void setMessageFilter(std::function<std::string(const std::string &)> filter) {
    messageFilter = std::move(filter);
  }

  SourceManager &getSourceManager() { return sourceMgr; }

private:
  void emit(DiagID id, SourceLoc loc, const std::string &message);
  void print(DiagKind kind, SourceLoc loc, const std::string &message);

  SourceManager &sourceMgr;
  std::function<std::string(const std::string &)> messageFilter;
  llvm::raw_ostream &os;
  unsigned errorLimit;
  unsigned numErrors = 0;
  unsigned numWarnings = 0;
  bool limitReached = false;
  /// Whether the last error or warning was printed; its notes follow it.
  bool lastPrinted = true;
};

} // namespace tkc
