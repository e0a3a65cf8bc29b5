//===- SpecParser.h - YAML tree to spec AST ---------------------*- C++ -*-===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SpecAST.h"

#include <optional>

namespace tkc {

/// Parses buffer `bufferId` into a KernelSpec.
///
/// Needs: the buffer registered with `diags`' source manager.
/// Guarantees: on success, every key is known, appears once and has a value of
/// the documented kind and range, and every required key is present. On
/// failure, returns std::nullopt after reporting at least one located error;
/// it reports as many independent errors as it finds, up to the error limit.
std::optional<spec::KernelSpec> parseSpec(unsigned bufferId, DiagnosticEngine &diags);

/// The spelling of `name` that is closest to one of `candidates`, if it is
/// close enough to be a plausible typo; otherwise an empty string.
std::string suggestSpelling(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace tkc
