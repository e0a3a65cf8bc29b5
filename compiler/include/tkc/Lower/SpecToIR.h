//===- SpecToIR.h - Spec AST to kernel IR -----------------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/IR/KernelIR.h"
#include "tkc/Target/Arch.h"
#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

#include <optional>
#include <vector>

namespace tkc {

/// One combination of parameter values (one value per parameter, in
/// declaration order) and the C++ name of its kernel.
struct Instance {
  std::vector<const spec::ParamValue *> values;
  std::string name;
};

/// Most instantiations one spec may make.
inline constexpr size_t kMaxInstances = 256;

/// Every instantiation of `spec`, the last parameter varying fastest.
/// Reports an error and returns an empty list past kMaxInstances.
std::vector<Instance> enumerateInstances(const spec::KernelSpec &spec, DiagnosticEngine &diags);

/// Lowers one instantiation of `spec` to kernel IR for the lcf template.
///
/// Needs: a spec that parseSpec accepted. Guarantees on success: the program
/// part of the kernel (globals, stage tiles, loads, state, matrix products,
/// epilogue, store) is complete, names are resolved, shapes and dtypes agree,
/// and every index steps by the tile it addresses; the plan is left empty.
/// On failure, reports located errors and returns std::nullopt.
std::optional<ir::Kernel> lowerSpecToIR(const spec::KernelSpec &spec, const Instance &instance,
                                        const ArchInfo &arch, DiagnosticEngine &diags);

} // namespace tkc
