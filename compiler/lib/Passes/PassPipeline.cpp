//===- PassPipeline.cpp - Every step from a spec instance to planned IR ----===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The one place that lists, in order, what happens to an instantiation of a
// spec between the parser and the emitter:
//
//   lower                lowerSpecToIR: names, shapes, the program
//   <passes>             Passes.def, in order
//   loop-tail            for a loop with a tail: the instance lowered again
//                        at the tail's step, through the passes, attached
//   whole-tiles          the copy without code for partial tiles, attached
//
// The verifier runs after every step; --print-after-all and --print-after
// print the IR after the steps they name, and --time-passes times each.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "tkc/Lower/SpecToIR.h"

#include "llvm/ADT/STLExtras.h"
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

/// The steps around the passes, with what each does.
const std::pair<const char *, const char *> kFirstSteps[] = {
    {"lower", "the spec instance as kernel IR: names, shapes, the consumer's program"},
};
const std::pair<const char *, const char *> kLastSteps[] = {
    {"loop-tail", "a loop with a tail: the instance lowered and planned at the tail's step"},
    {"whole-tiles", "the copy without the code for partial tiles, where that code exists"},
};

/// Runs a step: verifies the kernel after it, times it, prints it where asked.
class StepRunner {
public:
  explicit StepRunner(const PipelineOptions &options)
      : options(options), log(options.log ? *options.log : llvm::errs()) {}

  /// `body` runs the step and returns the kernel it leaves, or null after an error.
  template <class F> bool run(const char *step, const std::string &name, F body) {
    auto start = std::chrono::steady_clock::now();
    ir::Kernel *kernel = body();
    auto elapsed =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start);
    if (options.timePasses)
      log << "tkc: time " << step << " (" << name << "): " << llvm::format("%.1f", elapsed.count())
          << " us\n";
    if (!kernel)
      return false;
    ir::verifyKernel(*kernel);
    if (options.printAfterAll || llvm::is_contained(options.printAfter, step)) {
      log << "// -----// IR after " << step << " //----- //\n";
      printKernel(*kernel, log);
    }
    return true;
  }

  /// A step that changes `kernel` in place and returns false after an error.
  template <class F> bool run(const char *step, ir::Kernel &kernel, F body) {
    return run(step, kernel.name, [&]() -> ir::Kernel * { return body() ? &kernel : nullptr; });
  }

private:
  const PipelineOptions &options;
  llvm::raw_ostream &log;
};

bool runPasses(ir::Kernel &kernel, DiagnosticEngine &diags, StepRunner &steps) {
  for (const PassInfo &pass : kPasses)
    if (!steps.run(pass.flag, kernel, [&] { return pass.run(kernel, diags); }))
      return false;
  return true;
}

/// `kernel` lowered (and verified): the passes and the steps after them.
bool planKernel(ir::Kernel &kernel, const spec::KernelSpec &spec, const Instance &instance,
                const ArchInfo &arch, DiagnosticEngine &diags, StepRunner &steps) {
  if (!runPasses(kernel, diags, steps))
    return false;
  bool ok = steps.run("loop-tail", kernel, [&] {
    if (!kernel.loopTail)
      return true;
    const ir::LoopTail &at = *kernel.loopTail;
    std::optional<ir::Kernel> tail = lowerSpecToIR(spec, instance, arch, diags, at.step);
    if (!tail || !runPasses(*tail, diags, steps)) {
      diags.report(DiagID::note_loop_tail, at.loc, kernel.loop.name, at.step);
      return false;
    }
    // The tail's compute runs in this kernel's struct: its warpgroup tiles are this
    // kernel's copies, however many the tail's narrower stages would have left room for.
    tail->plan.setupBuffers = kernel.plan.setupBuffers;
    ir::attachLoopTail(kernel, std::move(*tail));
    return true;
  });
  return ok && steps.run("whole-tiles", kernel, [&] {
    ir::attachWholeTiles(kernel);
    return true;
  });
}
} // namespace

bool runPassPipeline(ir::Kernel &kernel, DiagnosticEngine &diags, const PipelineOptions &options) {
  StepRunner steps(options);
  ir::verifyKernel(kernel);
  return runPasses(kernel, diags, steps);
}

std::optional<ir::Kernel> compileInstance(const spec::KernelSpec &spec, const Instance &instance,
                                          const ArchInfo &arch, DiagnosticEngine &diags,
                                          const PipelineOptions &options) {
  StepRunner steps(options);
  std::optional<ir::Kernel> kernel;
  if (!steps.run("lower", instance.name, [&]() -> ir::Kernel * {
        kernel = lowerSpecToIR(spec, instance, arch, diags);
        return kernel ? &*kernel : nullptr;
      }))
    return std::nullopt;
  if (!planKernel(*kernel, spec, instance, arch, diags, steps))
    return std::nullopt;
  return kernel;
}

std::vector<std::string> pipelineSteps() {
  std::vector<std::string> names;
  for (const auto &[name, summary] : kFirstSteps)
    names.push_back(name);
  for (const PassInfo &pass : kPasses)
    names.push_back(pass.flag);
  for (const auto &[name, summary] : kLastSteps)
    names.push_back(name);
  return names;
}

void printPassList(llvm::raw_ostream &os) {
  for (const auto &[name, summary] : kFirstSteps)
    os << "  " << name << ": " << summary << "\n";
  for (const PassInfo &pass : kPasses)
    os << "  " << pass.flag << ": " << pass.summary << "\n";
  for (const auto &[name, summary] : kLastSteps)
    os << "  " << name << ": " << summary << "\n";
}

} // namespace tkc
