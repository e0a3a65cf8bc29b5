//===- YamlTree.cpp - A located YAML tree ----------------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/YamlTree.h"

#include "tkc/dsl/InternalError.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>

namespace tkc::yaml {

namespace {

/// Thrown from inside the event handler to stop yaml-cpp at the first event
/// the spec language cannot accept; turned into one diagnostic.
struct StopParse {
  DiagID id;
  SourceLoc loc;
  std::string arg;
};

/// Finds the first byte that is not valid UTF-8 or is a character YAML does
/// not allow in a stream; reports it and returns false.
bool checkEncoding(unsigned bufferId, DiagnosticEngine &diags) {
  SourceManager &sm = diags.getSourceManager();
  llvm::StringRef text = sm.getBufferText(bufferId);
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  size_t size = text.size();
  for (size_t i = 0; i < size;) {
    unsigned char c = bytes[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
        diags.report(DiagID::err_control_character, sm.getLocForOffset(bufferId, i),
                     static_cast<unsigned>(c));
        return false;
      }
      ++i;
      continue;
    }
    unsigned length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    uint32_t codePoint = length == 4 ? (c & 0x07u) : length == 3 ? (c & 0x0fu) : (c & 0x1fu);
    bool valid = length != 0 && c < 0xf5 && c != 0xc0 && c != 0xc1 && i + length <= size;
    for (unsigned k = 1; valid && k < length; ++k) {
      unsigned char next = bytes[i + k];
      valid = (next & 0xc0) == 0x80;
      codePoint = (codePoint << 6) | (next & 0x3fu);
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (valid)
      valid = !(length == 3 && codePoint < 0x800) && !(length == 4 && codePoint < 0x10000) &&
              !(codePoint >= 0xd800 && codePoint <= 0xdfff) && codePoint <= 0x10ffff;
    if (!valid) {
      diags.report(DiagID::err_invalid_utf8, sm.getLocForOffset(bufferId, i),
                   static_cast<unsigned>(c));
      return false;
    }
    // C1 controls (but NEL) and the two non-characters YAML excludes.
    if ((codePoint >= 0x80 && codePoint <= 0x9f && codePoint != 0x85) || codePoint == 0xfffe ||
        codePoint == 0xffff) {
      diags.report(DiagID::err_control_character, sm.getLocForOffset(bufferId, i), codePoint);
      return false;
    }
    i += length;
  }
  return true;
}

/// Builds the located tree from yaml-cpp's events.
class TreeBuilder : public YAML::EventHandler {
public:
  explicit TreeBuilder(unsigned bufferId) : bufferId(bufferId) {}

  std::unique_ptr<Node> takeRoot() { return std::move(root); }
  bool sawDocument() const { return documents != 0; }

  SourceLoc toLoc(const YAML::Mark &mark) const {
    if (mark.is_null() || mark.line < 0 || mark.column < 0)
      return SourceLoc{bufferId, 1, 1};
    return SourceLoc{bufferId, static_cast<unsigned>(mark.line) + 1,
                     static_cast<unsigned>(mark.column) + 1};
  }

  void OnDocumentStart(const YAML::Mark &mark) override {
    if (documents++ != 0)
      throw StopParse{DiagID::err_yaml_second_document, toLoc(mark), {}};
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark &mark, YAML::anchor_t) override {
    auto node = std::make_unique<Node>();
    node->kind = Node::Kind::Null;
    node->loc = toLoc(mark);
    attach(std::move(node));
  }

  void OnAlias(const YAML::Mark &mark, YAML::anchor_t) override {
    throw StopParse{DiagID::err_yaml_alias, toLoc(mark), {}};
  }

  void OnScalar(const YAML::Mark &mark, const std::string &tag, YAML::anchor_t,
                const std::string &value) override {
    auto node = std::make_unique<Node>();
    node->kind = Node::Kind::Scalar;
    node->loc = toLoc(mark);
    node->value = value;
    // yaml-cpp tags plain scalars "?" and quoted or block scalars "!".
    node->quoted = tag != "?";
    checkTag(tag, "tag:yaml.org,2002:str", mark);
    attach(std::move(node));
  }

  void OnSequenceStart(const YAML::Mark &mark, const std::string &tag, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    checkTag(tag, "tag:yaml.org,2002:seq", mark);
    open(Node::Kind::Sequence, mark);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark &mark, const std::string &tag, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    checkTag(tag, "tag:yaml.org,2002:map", mark);
    open(Node::Kind::Mapping, mark);
  }
  void OnMapEnd() override { close(); }

private:
  struct Frame {
    std::unique_ptr<Node> node;
    /// For mappings: the key read, waiting for its value.
    std::optional<Entry> pendingKey;
  };

  void checkTag(const std::string &tag, const char *allowed, const YAML::Mark &mark) {
    if (tag.empty() || tag == "?" || tag == "!" || tag == allowed)
      return;
    // Show the tag as written: yaml-cpp expands "!!x" to its full name.
    llvm::StringRef shown = tag;
    std::string written = shown.consume_front("tag:yaml.org,2002:") ? "!!" + shown.str() : tag;
    throw StopParse{DiagID::err_yaml_tag, toLoc(mark), written};
  }

  void open(Node::Kind kind, const YAML::Mark &mark) {
    if (stack.size() >= kMaxNestingDepth)
      throw StopParse{DiagID::err_yaml_too_deep, toLoc(mark), std::to_string(kMaxNestingDepth)};
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->loc = toLoc(mark);
    stack.push_back(Frame{std::move(node), std::nullopt});
  }

  void close() {
    TKC_INTERNAL_ASSERT(!stack.empty(), "yaml-cpp closed a collection it never opened");
    std::unique_ptr<Node> node = std::move(stack.back().node);
    stack.pop_back();
    attach(std::move(node));
  }

  void attach(std::unique_ptr<Node> node) {
    if (stack.empty()) {
      root = std::move(node);
      return;
    }
    Frame &parent = stack.back();
    if (parent.node->isSequence()) {
      parent.node->items.push_back(std::move(node));
      return;
    }
    if (!parent.pendingKey) {
      if (!node->isScalar())
        throw StopParse{DiagID::err_yaml_key_not_scalar, node->loc, node->describe()};
      parent.pendingKey = Entry{node->value, node->loc, nullptr};
      return;
    }
    // yaml-cpp places an empty value at the next token, often lines later;
    // the key it belongs to is the useful place to point at.
    if (node->isNull())
      node->loc = parent.pendingKey->keyLoc;
    parent.pendingKey->value = std::move(node);
    parent.node->entries.push_back(std::move(*parent.pendingKey));
    parent.pendingKey.reset();
  }

  unsigned bufferId;
  unsigned documents = 0;
  std::vector<Frame> stack;
  std::unique_ptr<Node> root;
};

} // namespace

std::string Node::describe() const {
  switch (kind) {
  case Kind::Null:
    return "an empty value";
  case Kind::Sequence:
    return "a list";
  case Kind::Mapping:
    return "a mapping";
  case Kind::Scalar:
    break;
  }
  constexpr size_t kMaxShown = 32;
  std::string shown;
  for (char c : value.substr(0, kMaxShown)) {
    if (c == '\n')
      shown += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      shown += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      shown += c;
  }
  if (value.size() > kMaxShown)
    shown += "...";
  return "'" + shown + "'";
}

std::unique_ptr<Node> parseYaml(unsigned bufferId, DiagnosticEngine &diags) {
  SourceManager &sm = diags.getSourceManager();
  if (!checkEncoding(bufferId, diags))
    return nullptr;

  llvm::StringRef text = sm.getBufferText(bufferId);
  std::istringstream stream{std::string(text)};
  TreeBuilder builder(bufferId);
  try {
    YAML::Parser parser(stream);
    if (parser.HandleNextDocument(builder))
      parser.HandleNextDocument(builder);
  } catch (const StopParse &stop) {
    diags.report(stop.id, stop.loc, stop.arg);
    return nullptr;
  } catch (const YAML::Exception &e) {
    SourceLoc loc =
        e.mark.is_null() ? sm.getLocForOffset(bufferId, text.size()) : builder.toLoc(e.mark);
    diags.report(DiagID::err_yaml_syntax, loc, e.msg);
    return nullptr;
  }

  std::unique_ptr<Node> root = builder.takeRoot();
  if (!root) {
    auto empty = std::make_unique<Node>();
    empty->loc = SourceLoc{bufferId, 1, 1};
    return empty;
  }
  return root;
}

} // namespace tkc::yaml
