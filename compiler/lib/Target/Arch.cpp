//===- Arch.cpp - What each GPU architecture offers ------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Target/Arch.h"

#include "tkc/dsl/SpecParser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

namespace tkc {

namespace {
// Measured on an H100 (the bench notes keep the evidence for each). The other
// architectures have no kernels that reach the passes using them yet: they share it.
constexpr Tuning kHopperTuning{
    /*headMajorMaxCount=*/16,
    /*headMajorMaxStages=*/2,
    /*pairedMaxCount=*/16,
    /*pairedMinCountShallowRing=*/6,
    /*pairedShallowRingMinWarpgroups=*/3,
    /*startRotatedMaxCount=*/32,
    /*startPairedMinCount=*/16,
    /*startPairedMaxCount=*/32,
    /*rotateRowBlocksMinWarpgroups=*/3,
    /*skipUnitFactorRegisters=*/64,
    /*programRegisterOverhead=*/20,
    /*splitResultRegisterOverhead=*/44,
};

// Shared memory: the per-block opt-in maximum from the CUDA programming
// guide's compute-capability table (227 KB on 9.0, 163 KB on 8.0).
const ArchInfo kArchs[] = {
    {"sm_90a", "-gencode=arch=compute_90a,code=sm_90a", 232448, 65536, true, true, true,
     kHopperTuning},
    {"sm_90", "-gencode=arch=compute_90,code=sm_90", 232448, 65536, false, true, false,
     kHopperTuning},
    {"sm_80", "-gencode=arch=compute_80,code=sm_80", 166912, 65536, false, false, false,
     kHopperTuning},
};
constexpr llvm::StringRef kDefaultArch = "sm_90a";
} // namespace

llvm::ArrayRef<ArchInfo> getKnownArchs() { return kArchs; }

const ArchInfo *lookupArch(llvm::StringRef name) {
  for (const ArchInfo &arch : kArchs)
    if (arch.name == name)
      return &arch;
  return nullptr;
}

std::string knownArchList() {
  return archListWith([](const ArchInfo &) { return true; });
}

std::string archListWith(bool (*has)(const ArchInfo &)) {
  llvm::SmallVector<llvm::StringRef, 4> names;
  for (const ArchInfo &arch : kArchs)
    if (has(arch))
      names.push_back(arch.name);
  return llvm::join(names, ", ");
}

const ArchInfo *resolveArch(const spec::KernelSpec &spec, std::optional<llvm::StringRef> override,
                            DiagnosticEngine &diags) {
  llvm::StringRef name = kDefaultArch;
  SourceLoc loc;
  if (override) {
    name = *override;
  } else if (spec.arch) {
    name = spec.arch->value;
    loc = spec.arch->loc;
  }
  const ArchInfo *arch = lookupArch(name);
  if (!arch) {
    llvm::SmallVector<llvm::StringRef, 4> names;
    for (const ArchInfo &known : kArchs)
      names.push_back(known.name);
    std::string suggestion = suggestSpelling(name, names);
    if (!suggestion.empty())
      diags.report(DiagID::err_unknown_enum_suggest, loc, "arch", name.str(), suggestion);
    else
      diags.report(DiagID::err_unknown_enum, loc, "arch", name.str(), knownArchList());
    return nullptr;
  }
  return arch;
}

} // namespace tkc
