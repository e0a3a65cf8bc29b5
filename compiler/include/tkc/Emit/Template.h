//===- Template.h - Boilerplate templates with placeholders -----*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Boilerplate the emitter writes lives in real files,
/// `compiler/lib/Emit/templates/NAME.in`, which the build embeds into tkc
/// (cmake/TkcEmbed.cmake): `#include "tkc/Emit/Templates/NAME.h"` declares
/// `tkc::templates::kName` (snake_case NAME becomes CamelCase), a
/// `std::string_view` of the file's exact bytes. expandTemplate() fills in
/// its `${name}` placeholders.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringMap.h"

#include <string>
#include <string_view>

namespace tkc {

/// Returns `tmpl` with every `${name}` replaced by `values[name]` (names are
/// C identifiers) and every `$${` by a literal `${`; any other `$` is copied.
/// Templates belong to tkc, so a mistake in one is an internal error
/// (InternalError): a placeholder without a value, a value no placeholder
/// uses, or a malformed placeholder (`${` without a name and `}`).
std::string expandTemplate(std::string_view tmpl, const llvm::StringMap<std::string> &values);

} // namespace tkc
