//===- PassPipeline.cpp - Running the passes in order ----------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/Support/Format.h"

#include <chrono>

namespace tkc {

namespace {
struct PassInfo {
  const char *flag;
  bool (*run)(ir::Kernel &, DiagnosticEngine &);
  const char *summary;
};

const PassInfo kPasses[] = {
#define PASS(FLAG, FUNCTION, SUMMARY) {FLAG, FUNCTION, SUMMARY},
#include "tkc/Passes/Passes.def"
};
} // namespace

bool runPassPipeline(ir::Kernel &kernel, DiagnosticEngine &diags, const PipelineOptions &options) {
  llvm::raw_ostream &log = options.log ? *options.log : llvm::errs();
  ir::verifyKernel(kernel);
  for (const PassInfo &pass : kPasses) {
    auto start = std::chrono::steady_clock::now();
    bool ok = pass.run(kernel, diags);
    auto elapsed =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start);
    if (options.timePasses)
      log << "tkc: time " << pass.flag << " (" << kernel.name
          << "): " << llvm::format("%.1f", elapsed.count()) << " us\n";
    if (!ok)
      return false;
    ir::verifyKernel(kernel);
    if (options.printAfterAll) {
      log << "// -----// IR after " << pass.flag << " //----- //\n";
      printKernel(kernel, log);
    }
  }
  return true;
}

void printPassList(llvm::raw_ostream &os) {
  for (const PassInfo &pass : kPasses)
    os << "  " << pass.flag << ": " << pass.summary << "\n";
}

} // namespace tkc
