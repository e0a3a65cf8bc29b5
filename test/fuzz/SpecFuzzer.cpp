//===- SpecFuzzer.cpp - libFuzzer target for the spec front end ------------===//
//
// Part of tkc. See docs/Testing.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes through everything `tkc --emit=ast` does with a
/// spec: the encoding check, YAML parsing, the schema checks, arch
/// resolution, diagnostic rendering with snippets and the AST printer. Any
/// crash, sanitizer report, hang or internal error (an uncaught InternalError
/// aborts) is a bug; reported user errors are the expected outcome.
///
//===----------------------------------------------------------------------===//
#include "tkc/Target/Arch.h"
#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SourceManager.h"
#include "tkc/dsl/SpecParser.h"
#include "tkc/dsl/SpecPrinter.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > tkc::SourceManager::kMaxFileBytes)
    return 0;
  tkc::SourceManager sourceMgr;
  unsigned bufferId =
      sourceMgr.addBuffer(llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.yaml");
  std::string messages;
  llvm::raw_string_ostream errs(messages);
  tkc::DiagnosticEngine diags(sourceMgr, errs);
  std::optional<tkc::spec::KernelSpec> spec = tkc::parseSpec(bufferId, diags);
  if (spec && tkc::resolveArch(*spec, std::nullopt, diags)) {
    std::string ast;
    llvm::raw_string_ostream out(ast);
    tkc::printSpec(*spec, out);
  }
  // A failed parse must have said why.
  if (!spec && !diags.hasErrors())
    __builtin_trap();
  return 0;
}
