//===- InternalError.h - Broken compiler invariants -------------*- C++ -*-===//
//
// Part of tkc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A broken invariant inside tkc is an internal error, never a user error:
/// TKC_INTERNAL_ASSERT throws InternalError, which the driver reports as
/// "internal error" with its own exit code. Bad input goes through the
/// DiagnosticEngine instead.
///
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>

namespace tkc {

class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void internalError(const std::string &message, const char *file, int line) {
  throw InternalError(message + " (" + file + ":" + std::to_string(line) + ")");
}

} // namespace tkc

#define TKC_INTERNAL_ASSERT(cond, message)                                                         \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::tkc::internalError(std::string("assertion '" #cond "' failed: ") + (message),              \
                           __FILE_NAME__, __LINE__);                                               \
  } while (false)
