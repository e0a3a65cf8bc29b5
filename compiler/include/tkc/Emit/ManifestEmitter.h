//===- ManifestEmitter.h - Kernel IR to a JSON launcher manifest -*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md ("What --emit=manifest writes").
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--emit=manifest`: a machine-readable list of the launchers that
/// `--emit=cuda` writes for the same spec and options, for tools that call
/// them (the Python loader generates its `extern "C"` shims from it).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/IR/KernelIR.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tkc {

struct ManifestOptions {
  /// The spec's file name as the manifest shows it (no directories).
  std::string specName;
  std::string version;
};

/// Writes one JSON document describing every kernel's launcher: its C++ name,
/// parameter values, pointer arguments in launcher order (name, dtype, C type,
/// rank, dims, role input/output), size symbols, and runtime scalars (name,
/// dtype, C type, default when the spec gives one).
///
/// Needs: kernels that passed the pass pipeline. Guarantees: deterministic
/// output (keys in a fixed order, no timestamps or paths), ending in a newline.
void emitManifest(const std::vector<ir::Kernel> &kernels, const ManifestOptions &options,
                  llvm::raw_ostream &os);

} // namespace tkc
