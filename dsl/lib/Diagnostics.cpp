//===- Diagnostics.cpp - Located diagnostics -------------------------------===//
//
// Part of tkc. See docs/Diagnostics.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"

namespace tkc {

namespace {
const DiagInfo kDiagTable[] = {
#define DIAG(ID, KIND, TEXT) {#ID, DiagKind::KIND, TEXT},
#include "tkc/dsl/Diagnostics.def"
};

llvm::SourceMgr::DiagKind toLLVMKind(DiagKind kind) {
  switch (kind) {
  case DiagKind::Error:
    return llvm::SourceMgr::DK_Error;
  case DiagKind::Warning:
    return llvm::SourceMgr::DK_Warning;
  case DiagKind::Note:
    return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}
} // namespace

std::string describeError(std::error_code ec) {
  std::string message = ec.message();
  if (!message.empty())
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

const DiagInfo &getDiagInfo(DiagID id) { return kDiagTable[static_cast<unsigned>(id)]; }

llvm::ArrayRef<DiagInfo> getAllDiagInfos() { return kDiagTable; }

DiagnosticEngine::DiagnosticEngine(SourceManager &sourceMgr, llvm::raw_ostream &os,
                                   unsigned errorLimit)
    : sourceMgr(sourceMgr), os(os), errorLimit(errorLimit) {}

void DiagnosticEngine::emit(DiagID id, SourceLoc loc, const std::string &message) {
  DiagKind kind = getDiagInfo(id).kind;
  if (kind == DiagKind::Note) {
    if (!lastPrinted)
      return;
  } else {
    if (limitReached) {
      lastPrinted = false;
      return;
    }
    if (kind == DiagKind::Error && errorLimit != 0 && numErrors == errorLimit) {
      limitReached = true;
      lastPrinted = false;
      print(DiagKind::Error, SourceLoc(),
            fmt::format(fmt::runtime(getDiagInfo(DiagID::err_too_many_errors).text.str()),
                        errorLimit));
      return;
    }
    lastPrinted = true;
  }
  if (kind == DiagKind::Error)
    ++numErrors;
  else if (kind == DiagKind::Warning)
    ++numWarnings;
  print(kind, loc, messageFilter ? messageFilter(message) : message);
}

void DiagnosticEngine::print(DiagKind kind, SourceLoc loc, const std::string &message) {
  llvm::SMLoc smLoc = loc.isValid() ? sourceMgr.toSMLoc(loc) : llvm::SMLoc();
  if (smLoc.isValid()) {
    sourceMgr.getLLVMSourceMgr().PrintMessage(os, smLoc, toLLVMKind(kind), message);
    return;
  }
  const char *label = kind == DiagKind::Error     ? "error"
                      : kind == DiagKind::Warning ? "warning"
                                                  : "note";
  os << "tkc: " << label << ": " << message << "\n";
  os.flush();
}

} // namespace tkc
