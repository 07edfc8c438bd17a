// YamlReader: the schema-checking helpers shared by the rule loader and the
// action catalogue loader (internal to engine/). It collects diagnostics
// instead of stopping, knows the source text so that it can point into
// scalars, and never throws: LoadYamlDocument is the one place that catches
// YAML::Exception.
//
//   YamlReader reader(text, "rules/x.yaml", &diagnostics);
//   LoadYamlDocument(reader, [&](const YAML::Node& root) {
//     auto top = reader.ReadMapping(root, "the rule file", {"apiVersion", "kind"});
//     if (const MappingField* kind = top ? reader.Require(*top, "kind") : nullptr) { ... }
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engine/common/error.h"
#include "engine/rule_file/diagnostics.h"

namespace ruleplane {

struct MappingField {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// A mapping's entries in file order, keys already checked.
struct Mapping {
  YAML::Node node;
  std::string what;  // "rule", "fact", ... for messages
  std::vector<MappingField> fields;

  const MappingField* Find(std::string_view key) const;
};

class YamlReader {
 public:
  YamlReader(std::string_view text, std::string file, Diagnostics* diagnostics);

  const std::string& file() const { return file_; }
  std::string_view text() const { return text_; }

  void Error(const SourcePosition& position, std::string message);
  void Error(const YAML::Node& node, std::string message);

  // 1-based position of a node (of its first character, or of its anchor/tag).
  SourcePosition PositionOf(const YAML::Node& node) const;
  // Where a field's value is; for an empty value (`key:`), the key.
  SourcePosition PositionOf(const MappingField& field) const;
  // The file position of the character at `offset` of node.Scalar(), through
  // quotes, escapes, block scalar indentation and folded lines.
  SourcePosition LocateInScalar(const YAML::Node& node, size_t offset) const;

  // A mapping with only `allowed_keys`: reports a non-mapping, unknown keys
  // (listing the allowed ones), non-string and duplicate keys.
  std::optional<Mapping> ReadMapping(const YAML::Node& node, std::string_view what,
                                     std::initializer_list<std::string_view> allowed_keys);
  // A mapping with arbitrary string keys (reports non-string and duplicate keys).
  std::optional<Mapping> ReadOpenMapping(const YAML::Node& node, std::string_view what);
  // The field, or nullptr after reporting "missing required key".
  const MappingField* Require(const Mapping& mapping, std::string_view key);
  // A required string field that must equal `expected` (apiVersion, kind):
  // reports "unsupported <key> '<value>'; expected '<expected>'".
  void RequireConstant(const Mapping& mapping, std::string_view key, std::string_view expected);

  // Typed field values; each reports a mismatch and returns nullopt.
  bool ExpectSequence(const MappingField& field);
  std::optional<std::string> ReadString(const MappingField& field);
  std::optional<int64_t> ReadInt(const MappingField& field);
  std::optional<bool> ReadBool(const MappingField& field);

  // The text of a scalar node (a null node written as `~` or `null` gives that
  // text; an empty one gives ""). nullopt for sequences and mappings.
  std::optional<std::string> ScalarText(const YAML::Node& node) const;

  // "a mapping", "a sequence", "null", "'text'".
  std::string Describe(const YAML::Node& node) const;

 private:
  size_t LineStart(int line) const;  // 0-based line -> byte offset
  SourcePosition PositionAtOffset(size_t offset) const;
  size_t NodeOffset(const YAML::Node& node) const;  // after anchor and tag

  std::string text_;
  std::string file_;
  Diagnostics* diagnostics_;
  std::vector<size_t> line_starts_;
};

// Parses `reader.text()` and calls `walk` with the root node. A YAML syntax
// error (or any other YAML::Exception) becomes one diagnostic with its mark.
void LoadYamlDocument(YamlReader& reader, const std::function<void(const YAML::Node&)>& walk);

// Whether `text` parses as a plain YAML integer / bool (the core schema).
std::optional<int64_t> ParseYamlInt(std::string_view text);
std::optional<bool> ParseYamlBool(std::string_view text);

// "a, b or c" / "'x'", for messages.
std::string JoinNames(const std::vector<std::string>& names, std::string_view last_separator = ", ");

// The closest of `candidates` to `name` (edit distance <= 2, or equal ignoring
// case), for "did you mean" hints; empty when there is none.
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace ruleplane
