//===- CudaEmitter.h - Kernel IR to CUDA C++ on kittens ---------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/IR/KernelIR.h"
#include "tkc/dsl/Diagnostics.h"

#include <string>
#include <vector>

namespace tkc {

struct EmitOptions {
  /// The name the .cu file includes its header by (e.g. "gemm.h"); empty
  /// when no header is written (the .cu then stands alone).
  std::string headerName;
  /// The spec's file name as the banner shows it (no directories).
  std::string specName;
  std::string version;
};

struct EmittedFiles {
  std::string source; ///< the .cu: kernels and host launchers
  std::string header; ///< declarations of the launchers
};

/// Writes every planned kernel of one spec as CUDA C++ on kittens' lcf
/// template, with one host launcher per kernel that checks its arguments
/// (pointers, extents, 16-byte row pitches) and returns an error instead of
/// launching on a shape the kernel cannot do.
///
/// Needs: kernels that passed the pass pipeline (and checkEntries). Guarantees:
/// deterministic, unformatted text (formatCuda tidies it); the compiler's
/// numbers are repeated as static_asserts against kittens' own layout
/// arithmetic. Decides nothing and reports nothing: whatever it prints was
/// checked by the lowering or chosen by a pass.
void emitCuda(const std::vector<ir::Kernel> &kernels, const EmitOptions &options,
              EmittedFiles &out);

} // namespace tkc
