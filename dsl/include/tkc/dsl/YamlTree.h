//===- YamlTree.h - A located YAML tree -------------------------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The spec's YAML as a small tree in which every node and every mapping key
/// carries its source location. It is built from yaml-cpp's event stream
/// rather than from YAML::Node so that duplicate keys, aliases, tags, nesting
/// depth and multiple documents can be reported where they occur.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "tkc/dsl/Diagnostics.h"
#include "tkc/dsl/SourceManager.h"

#include <memory>
#include <string>
#include <vector>

namespace tkc::yaml {

struct Node;

/// A mapping entry: a scalar key and its value, both located.
struct Entry {
  std::string key;
  SourceLoc keyLoc;
  std::unique_ptr<Node> value;
};

struct Node {
  enum class Kind { Null, Scalar, Sequence, Mapping };

  Kind kind = Kind::Null;
  SourceLoc loc;
  /// Scalar text (after YAML unescaping and block folding).
  std::string value;
  /// True for quoted and block scalars: their text is a string, never a
  /// number or a boolean.
  bool quoted = false;
  /// Sequence items.
  std::vector<std::unique_ptr<Node>> items;
  /// Mapping entries in source order; duplicates are kept so that the schema
  /// checker can point at both.
  std::vector<Entry> entries;

  bool isNull() const { return kind == Kind::Null; }
  bool isScalar() const { return kind == Kind::Scalar; }
  bool isSequence() const { return kind == Kind::Sequence; }
  bool isMapping() const { return kind == Kind::Mapping; }

  /// "a mapping", "a sequence", "an empty value" or "'text'" (shortened), for
  /// messages that say what was found.
  std::string describe() const;
};

/// Deepest nesting of sequences and mappings a spec may use.
inline constexpr unsigned kMaxNestingDepth = 64;

/// Parses buffer `bufferId` as one YAML document. Checks the bytes first
/// (UTF-8, no control characters). Returns nullptr after reporting an error;
/// otherwise returns the root, which may be a Null node for an empty document.
std::unique_ptr<Node> parseYaml(unsigned bufferId, DiagnosticEngine &diags);

} // namespace tkc::yaml
