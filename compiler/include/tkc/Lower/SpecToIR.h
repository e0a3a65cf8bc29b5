//===- SpecToIR.h - Spec AST to kernel IR -----------------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/IR/KernelIR.h"
#include "tkc/Passes/Passes.h"
#include "tkc/Target/Arch.h"
#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <vector>

namespace tkc {

/// One combination of parameter values (one value per parameter, in
/// declaration order) and the C++ name of its kernel.
struct Instance {
  std::vector<const spec::ParamValue *> values;
  std::string name;
  /// Set when the spec selects parameters at launch (see ir::Entry).
  std::optional<ir::Entry> entry;
};

/// Most instantiations one spec may make.
inline constexpr size_t kMaxInstances = 256;

/// `--param NAME=VALUE`: keep only the instantiations in which parameter
/// NAME has VALUE (spelt as in the spec; booleans as true/false). Several
/// restrictions of one parameter keep each of their values.
struct ParamRestriction {
  std::string name, value;
};

/// Checks that every restriction names a parameter of `spec` and one of its
/// values; reports a command-line error (no location) for each that does not.
bool checkParamRestrictions(const spec::KernelSpec &spec, llvm::ArrayRef<ParamRestriction> only,
                            DiagnosticEngine &diags);

/// Every instantiation of `spec`, the last parameter varying fastest, less
/// those `only` excludes (which must have passed checkParamRestrictions) and
/// those a launch-time selection never picks. Names do not depend on `only`.
/// Parameters named in `select:` are left out of the launchers' names: the
/// instances that differ only in them share one ir::Entry, and each carries
/// the C++ condition under which that launcher runs it. Reports an error and
/// returns an empty list past kMaxInstances or for an invalid `select:`.
std::vector<Instance> enumerateInstances(const spec::KernelSpec &spec, DiagnosticEngine &diags,
                                         llvm::ArrayRef<ParamRestriction> only = {});

/// Lowers one instantiation of `spec` to kernel IR for the lcf template; with
/// `tailStep`, as its loop tail (ir::LoopTail): the stage tiles' extent along
/// the loop and the loop's step set to it.
///
/// Needs: a spec that parseSpec accepted. Guarantees on success: globals,
/// stage tiles, loads and the consumer's program are complete, names are
/// resolved, shapes and dtypes agree, every index steps by the tile it
/// addresses, and each global has one use; the plan is left empty. On
/// failure, reports located errors and returns std::nullopt.
std::optional<ir::Kernel> lowerSpecToIR(const spec::KernelSpec &spec, const Instance &instance,
                                        const ArchInfo &arch, DiagnosticEngine &diags,
                                        std::optional<int64_t> tailStep = std::nullopt);

/// Every step from an instantiation to a planned kernel, in order (PassPipeline.cpp):
/// lowering, the passes, the loop tail's lowering and passes, the whole-tile copy.
/// What the driver runs for each instantiation.
std::optional<ir::Kernel> compileInstance(const spec::KernelSpec &spec, const Instance &instance,
                                          const ArchInfo &arch, DiagnosticEngine &diags,
                                          const PipelineOptions &options);

/// Renames, in the parsed spec, every name that reaches the generated C++ and that the C++
/// cannot take (a keyword, a CUDA built-in, a name of the generated code: `do`, `int`,
/// `args`) to `tkc_u_` and the name, which no spec can write. Parameters and constants keep
/// theirs (they are folded away). Run once, before the instances are lowered. A name
/// starting with `tkc_` or `__` is refused where it is written (false).
bool mangleReservedNames(spec::KernelSpec &spec, DiagnosticEngine &diags);
/// Whether the generated C++ cannot take `name` as written.
bool isReservedCxxName(llvm::StringRef name);
/// Whether `name` is a reserved name renamed by mangleReservedNames.
bool isMangledName(llvm::StringRef name);
/// `text` with every renamed name shown as the spec wrote it.
std::string unmangledNames(llvm::StringRef text);

} // namespace tkc
