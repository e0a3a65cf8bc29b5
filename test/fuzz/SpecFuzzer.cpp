//===- SpecFuzzer.cpp - libFuzzer target for the spec front end ------------===//
//
// Part of tkc. See docs/Testing.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes through everything `tkc` does with a spec: the
/// encoding check, YAML parsing, the schema checks, arch resolution,
/// diagnostic rendering with snippets, the AST printer, and for specs that
/// parse, the lowering of each instantiation, the passes, the IR printer and
/// the CUDA emitter (without libFormat). Any crash, sanitizer report, hang or
/// internal error (an uncaught InternalError aborts) is a bug; reported user
/// errors are the expected outcome.
///
//===----------------------------------------------------------------------===//
#include "tkc/Emit/CudaEmitter.h"
#include "tkc/Lower/SpecToIR.h"
#include "tkc/Passes/Passes.h"
#include "tkc/Target/Arch.h"
#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SourceManager.h"
#include "tkc/dsl/SpecParser.h"
#include "tkc/dsl/SpecPrinter.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
  const tkc::ArchInfo *arch = spec ? tkc::resolveArch(*spec, std::nullopt, diags) : nullptr;
  if (arch) {
    std::string text;
    llvm::raw_string_ostream out(text);
    tkc::printSpec(*spec, out);
    // Lower at most a few instantiations: the front end is what is fuzzed.
    std::vector<tkc::Instance> instances = tkc::enumerateInstances(*spec, diags);
    std::vector<tkc::ir::Kernel> kernels;
    tkc::PipelineOptions options{false, false, {}, &out};
    for (size_t i = 0; i < instances.size() && i < 4; ++i) {
      std::optional<tkc::ir::Kernel> kernel =
          tkc::compileInstance(*spec, instances[i], *arch, diags, options);
      if (!kernel)
        break;
      tkc::ir::printKernel(*kernel, out);
      kernels.push_back(std::move(*kernel));
    }
    if (!kernels.empty() && !diags.hasErrors()) {
      tkc::EmittedFiles files;
      tkc::emitCuda(kernels, tkc::EmitOptions{"k.h", "fuzz.yaml", "0"}, files);
    }
  }
  // A failed parse must have said why.
  if (!spec && !diags.hasErrors())
    __builtin_trap();
  return 0;
}
