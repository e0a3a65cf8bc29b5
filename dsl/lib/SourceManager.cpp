//===- SourceManager.cpp - Spec buffers and source locations --------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/SourceManager.h"

#include "llvm/Support/FileSystem.h"

#include "tkc/dsl/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace tkc {

unsigned SourceManager::addBuffer(llvm::StringRef contents, llvm::StringRef name) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(contents, name);
  return mgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
}

std::optional<unsigned> SourceManager::addFile(llvm::StringRef path, std::string &error,
                                               uint64_t maxBytes, bool *tooLarge) {
  if (tooLarge)
    *tooLarge = false;
  llvm::sys::fs::file_t file = llvm::sys::fs::getStdinHandle();
  if (path != "-") {
    llvm::Expected<llvm::sys::fs::file_t> opened = llvm::sys::fs::openNativeFileForRead(path);
    if (!opened) {
      error = describeError(llvm::errorToErrorCode(opened.takeError()));
      return std::nullopt;
    }
    file = *opened;
  }
  // Read in chunks, never more than one byte past the limit.
  std::string text;
  std::error_code ec;
  constexpr size_t kChunk = 1 << 16;
  while (text.size() <= maxBytes) {
    size_t at = text.size();
    text.resize(at + kChunk);
    llvm::Expected<size_t> got =
        llvm::sys::fs::readNativeFile(file, llvm::MutableArrayRef<char>(text.data() + at, kChunk));
    if (!got) {
      ec = llvm::errorToErrorCode(got.takeError());
      text.resize(at);
      break;
    }
    text.resize(at + *got);
    if (*got == 0)
      break;
  }
  if (path != "-")
    llvm::sys::fs::closeFile(file);
  if (ec) {
    error = describeError(ec);
    return std::nullopt;
  }
  if (text.size() > maxBytes) {
    if (tooLarge)
      *tooLarge = true;
    error = "larger than the limit";
    return std::nullopt;
  }
  return addBuffer(text, path == "-" ? "<stdin>" : path);
}

llvm::StringRef SourceManager::getBufferName(unsigned bufferId) const {
  return mgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
}

llvm::StringRef SourceManager::getBufferText(unsigned bufferId) const {
  return mgr.getMemoryBuffer(bufferId)->getBuffer();
}

SourceLoc SourceManager::getLocForOffset(unsigned bufferId, size_t offset) const {
  llvm::StringRef text = getBufferText(bufferId);
  offset = std::min(offset, text.size());
  auto [line, col] =
      mgr.getLineAndColumn(llvm::SMLoc::getFromPointer(text.data() + offset), bufferId);
  return SourceLoc{bufferId, line, col};
}

std::optional<size_t> SourceManager::getOffset(SourceLoc loc) const {
  if (!loc.isValid() || loc.bufferId > mgr.getNumBuffers())
    return std::nullopt;
  llvm::StringRef text = getBufferText(loc.bufferId);
  llvm::SMLoc lineStart = mgr.FindLocForLineAndColumn(loc.bufferId, loc.line, 1);
  // A line past the end (e.g. yaml-cpp's "end of stream") means the end.
  if (!lineStart.isValid())
    return text.size();
  size_t start = lineStart.getPointer() - text.data();
  size_t lineEnd = text.find_first_of("\r\n", start);
  if (lineEnd == llvm::StringRef::npos)
    lineEnd = text.size();
  // A column may point one past the end of its line, never into the next.
  return std::min(start + (loc.col ? loc.col - 1 : 0), lineEnd);
}

llvm::StringRef SourceManager::getLineText(unsigned bufferId, unsigned line) const {
  llvm::StringRef text = getBufferText(bufferId);
  llvm::SMLoc start = mgr.FindLocForLineAndColumn(bufferId, line, 1);
  if (!start.isValid())
    return {};
  llvm::StringRef rest = text.drop_front(start.getPointer() - text.data());
  return rest.take_until([](char c) { return c == '\n' || c == '\r'; });
}

llvm::SMLoc SourceManager::toSMLoc(SourceLoc loc) const {
  std::optional<size_t> offset = getOffset(loc);
  if (!offset)
    return llvm::SMLoc();
  return llvm::SMLoc::getFromPointer(getBufferText(loc.bufferId).data() + *offset);
}

} // namespace tkc
