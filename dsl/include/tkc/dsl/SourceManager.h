//===- SourceManager.h - Spec buffers and source locations ------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Owns the text of every spec the compiler reads and turns (buffer, line,
/// column) triples into the source-line-and-caret snippets that diagnostics
/// print. Lines and columns are 1-based; columns count bytes, as LLVM's do.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tkc {

/// A position in a spec. Value type; `bufferId == 0` means "no location".
struct SourceLoc {
  unsigned bufferId = 0;
  unsigned line = 0;
  unsigned col = 0;

  bool isValid() const { return bufferId != 0 && line != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

/// Owns spec buffers. Wraps llvm::SourceMgr, which renders snippets and carets.
class SourceManager {
public:
  /// Largest spec the front end reads. Larger inputs are rejected up front so
  /// that a stray binary file cannot make the parser crawl.
  static constexpr uint64_t kMaxFileBytes = 16u << 20;

  /// Adds `contents` as a buffer named `name` and returns its id (never 0).
  unsigned addBuffer(llvm::StringRef contents, llvm::StringRef name);

  /// Reads `path` ("-": standard input) into a new buffer, reading at most
  /// `maxBytes` + 1 bytes whatever the file is (a pipe, /dev/zero): a longer
  /// input sets `tooLarge` instead of being buffered whole. On failure returns
  /// std::nullopt and sets `error` to a lowercase description (e.g. "no such
  /// file or directory").
  std::optional<unsigned> addFile(llvm::StringRef path, std::string &error,
                                  uint64_t maxBytes = kMaxFileBytes, bool *tooLarge = nullptr);

  llvm::StringRef getBufferName(unsigned bufferId) const;
  llvm::StringRef getBufferText(unsigned bufferId) const;

  /// The location of byte `offset` in the buffer (clamped to its end).
  SourceLoc getLocForOffset(unsigned bufferId, size_t offset) const;

  /// The byte offset of `loc` in its buffer, or std::nullopt if it lies
  /// outside the buffer.
  std::optional<size_t> getOffset(SourceLoc loc) const;

  /// The text of line `line` (1-based) without its line terminator.
  llvm::StringRef getLineText(unsigned bufferId, unsigned line) const;

  /// Converts to the pointer-based location llvm::SourceMgr uses.
  llvm::SMLoc toSMLoc(SourceLoc loc) const;

  llvm::SourceMgr &getLLVMSourceMgr() { return mgr; }
  const llvm::SourceMgr &getLLVMSourceMgr() const { return mgr; }

private:
  // llvm::SourceMgr caches line tables inside its const-looking queries.
  mutable llvm::SourceMgr mgr;
};

} // namespace tkc
