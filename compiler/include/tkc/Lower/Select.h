//===- Select.h - Parameters chosen at launch -------------------*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md ("select").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/Lower/SpecToIR.h"

namespace tkc {

/// Applies the spec's `select:` to its instances (called by enumerateInstances).
///
/// Needs: instances named over the parameters that are not selected (so the
/// instances that differ only in selected parameters share a name). Checks
/// that each selection names a parameter whose values are [false, true] and
/// that its condition reads only parameters, sizes and integers, reporting
/// located errors. Then evaluates each condition with each instance's
/// parameters: an instance whose selected value its condition never yields
/// (the condition is constant there) is dropped; the others get an
/// ir::Entry named as they were, the C++ condition under which that launcher
/// runs them, and a name of their own (the entry's plus `_P_VALUE` for each
/// selected parameter P) unless they are the only kernel left behind it.
bool applySelections(const spec::KernelSpec &spec, std::vector<Instance> &instances,
                     DiagnosticEngine &diags);

/// Checks that the kernels behind each choosing launcher take the same
/// arguments (globals with their dtypes, dims and roles, sizes, scalars and
/// their defaults) and that its conditions read only sizes it takes; reports
/// a located error at the spec's `select:` otherwise. Run on the lowered
/// kernels before anything is emitted, whatever `--emit` asks for.
bool checkEntries(const std::vector<ir::Kernel> &kernels, DiagnosticEngine &diags);

} // namespace tkc
