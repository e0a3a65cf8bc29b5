//===- Arch.h - What each GPU architecture offers ---------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The table of GPU architectures tkc knows: their limits (shared memory,
/// registers) and features (wgmma, TMA, setmaxnreg). Passes read budgets and
/// legality from here, never from numbers typed elsewhere.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tkc {

struct ArchInfo {
  /// The spelling in specs and on the command line (e.g. "sm_90a").
  llvm::StringRef name;
  /// nvcc's -gencode argument for it.
  llvm::StringRef nvccGencode;
  /// Largest dynamic shared memory one block may opt in to, in bytes.
  unsigned maxSharedBytesPerBlock;
  /// 32-bit registers per multiprocessor.
  unsigned registersPerSM;
  bool hasWgmma;
  bool hasTma;
  bool hasSetmaxnreg;
};

/// Every architecture tkc knows, in table order. What a kernel may do on one
/// is decided by its features: the lowering reports each one a spec needs and
/// the arch lacks.
llvm::ArrayRef<ArchInfo> getKnownArchs();

/// The entry named `name`, or nullptr.
const ArchInfo *lookupArch(llvm::StringRef name);

/// The architecture to compile `spec` for: `override` (from --arch) when
/// given, else the spec's `arch`, else the default (sm_90a). Reports a
/// located error and returns nullptr for an unknown arch.
const ArchInfo *resolveArch(const spec::KernelSpec &spec, std::optional<llvm::StringRef> override,
                            DiagnosticEngine &diags);

/// The names of the known architectures, comma-separated.
std::string knownArchList();

/// The names of the known architectures that have every feature `has` asks
/// for, comma-separated (for "use sm_90a" hints).
std::string archListWith(bool (*has)(const ArchInfo &));

} // namespace tkc
