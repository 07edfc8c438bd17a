#include "engine/rule_file/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include <yaml-cpp/depthguard.h>

#include "engine/common/ascii.h"

namespace ruleplane {
namespace {

enum class ScalarStyle { kPlain, kSingleQuoted, kDoubleQuoted, kBlock };

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsLineBreak(char c) { return c == '\n' || c == '\r'; }

// Source bytes of a double-quoted escape sequence starting at `text[at]` ('\\').
size_t EscapeLength(std::string_view text, size_t at) {
  if (at + 1 >= text.size()) return 1;
  switch (text[at + 1]) {
    case 'x':
      return 4;
    case 'u':
      return 6;
    case 'U':
      return 10;
    default:
      return 2;
  }
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

const MappingField* Mapping::Find(std::string_view key) const {
  for (const MappingField& field : fields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

YamlReader::YamlReader(std::string_view text, std::string file, Diagnostics* diagnostics)
    : text_(text), file_(std::move(file)), diagnostics_(diagnostics) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

void YamlReader::Error(const SourcePosition& position, std::string message) {
  diagnostics_->push_back({Diagnostic::Severity::kError, position, std::move(message)});
}

void YamlReader::Error(const YAML::Node& node, std::string message) {
  Error(PositionOf(node), std::move(message));
}

size_t YamlReader::LineStart(int line) const {
  if (line < 0) return 0;
  if (static_cast<size_t>(line) >= line_starts_.size()) return text_.size();
  return line_starts_[line];
}

SourcePosition YamlReader::PositionAtOffset(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto next_line = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(next_line - line_starts_.begin());  // 1-based
  return {file_, static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
}

SourcePosition YamlReader::PositionOf(const YAML::Node& node) const {
  YAML::Mark mark = node.Mark();
  if (mark.line < 0 || mark.column < 0) return {file_, 1, 1};
  return {file_, mark.line + 1, mark.column + 1};
}

SourcePosition YamlReader::PositionOf(const MappingField& field) const {
  return field.value.IsNull() && ScalarText(field.value)->empty() ? PositionOf(field.key_node)
                                                                  : PositionOf(field.value);
}

size_t YamlReader::NodeOffset(const YAML::Node& node) const {
  YAML::Mark mark = node.Mark();
  if (mark.line < 0 || mark.column < 0) return text_.size();
  size_t at = std::min(LineStart(mark.line) + mark.column, text_.size());
  // The mark of a node with properties is at its anchor or tag.
  while (at < text_.size() && (text_[at] == '&' || text_[at] == '!')) {
    while (at < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at]))) ++at;
    while (at < text_.size() && std::isspace(static_cast<unsigned char>(text_[at]))) ++at;
  }
  return at;
}

SourcePosition YamlReader::LocateInScalar(const YAML::Node& node, size_t offset) const {
  size_t at = NodeOffset(node);
  if (at >= text_.size()) return PositionOf(node);
  ScalarStyle style = ScalarStyle::kPlain;
  if (text_[at] == '"') style = ScalarStyle::kDoubleQuoted;
  if (text_[at] == '\'') style = ScalarStyle::kSingleQuoted;
  if (text_[at] == '|' || text_[at] == '>') style = ScalarStyle::kBlock;

  size_t block_indent = 0;
  if (style == ScalarStyle::kBlock) {
    at = text_.find('\n', at);
    if (at == std::string::npos) return PositionOf(node);
    ++at;
    // The indentation of the first non-empty content line.
    for (size_t line = at; line < text_.size();) {
      size_t first = line;
      while (first < text_.size() && text_[first] == ' ') ++first;
      if (first < text_.size() && !IsLineBreak(text_[first])) {
        block_indent = first - line;
        break;
      }
      size_t newline = text_.find('\n', line);
      if (newline == std::string::npos) break;
      line = newline + 1;
    }
    for (size_t i = 0; i < block_indent && at < text_.size() && text_[at] == ' '; ++i) ++at;
  } else if (style != ScalarStyle::kPlain) {
    ++at;
  }

  // Walks value and source together; source-only characters (line breaks,
  // indentation, escapes, stripped spaces) are skipped.
  const std::string& value = node.Scalar();
  size_t target = std::min(offset, value.size());
  size_t i = 0;
  while (i < target && at < text_.size()) {
    char c = text_[at];
    if (style == ScalarStyle::kDoubleQuoted && c == '\\') {
      at += EscapeLength(text_, at);
      ++i;
      continue;
    }
    if (style == ScalarStyle::kSingleQuoted && c == '\'' && at + 1 < text_.size() && text_[at + 1] == '\'') {
      at += 2;
      ++i;
      continue;
    }
    if (IsLineBreak(c)) {
      size_t newline = text_.find('\n', at);
      if (newline == std::string::npos) break;
      at = newline + 1;
      if (style == ScalarStyle::kBlock) {
        for (size_t k = 0; k < block_indent && at < text_.size() && text_[at] == ' '; ++k) ++at;
      } else {
        while (at < text_.size() && IsBlank(text_[at])) ++at;
      }
      if (value[i] == ' ' || value[i] == '\n') ++i;
      continue;
    }
    if (c == value[i]) ++i;
    ++at;
  }
  return PositionAtOffset(at);
}

std::optional<std::string> YamlReader::ScalarText(const YAML::Node& node) const {
  if (node.IsScalar()) return node.Scalar();
  if (!node.IsNull()) return std::nullopt;
  // yaml-cpp keeps no text for `~` / `null`; read it from the source.
  size_t at = NodeOffset(node);
  for (std::string_view word : {"~", "null", "Null", "NULL"}) {
    if (text_.compare(at, word.size(), word) != 0) continue;
    size_t end = at + word.size();
    if (end >= text_.size() || std::isspace(static_cast<unsigned char>(text_[end])) || text_[end] == ',' ||
        text_[end] == ']' || text_[end] == '}' || text_[end] == '#') {
      return std::string(word);
    }
  }
  return std::string();
}

std::string YamlReader::Describe(const YAML::Node& node) const {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a sequence";
  std::string text = ScalarText(node).value_or("");
  if (node.IsNull() && text.empty()) return "nothing";
  if (node.IsNull()) return "null";
  return "'" + text + "'";
}

std::optional<Mapping> YamlReader::ReadOpenMapping(const YAML::Node& node, std::string_view what) {
  if (!node.IsMap()) {
    Error(node, "expected a mapping for " + std::string(what) + ", got " + Describe(node));
    return std::nullopt;
  }
  Mapping mapping{node, std::string(what), {}};
  for (auto it = node.begin(); it != node.end(); ++it) {
    YAML::Node key = it->first;  // a copy: `it->` yields a temporary
    if (!key.IsScalar()) {
      Error(key, "expected a string key in " + std::string(what) + ", got " + Describe(key));
      continue;
    }
    if (const MappingField* first = mapping.Find(key.Scalar())) {
      Error(key, "duplicate key '" + key.Scalar() + "' in " + std::string(what) + " (first at line " +
                     std::to_string(PositionOf(first->key_node).line) + ")");
      continue;
    }
    mapping.fields.push_back({key.Scalar(), key, it->second});
  }
  return mapping;
}

std::optional<Mapping> YamlReader::ReadMapping(const YAML::Node& node, std::string_view what,
                                               std::initializer_list<std::string_view> allowed_keys) {
  std::optional<Mapping> mapping = ReadOpenMapping(node, what);
  if (!mapping) return std::nullopt;
  std::vector<std::string> allowed(allowed_keys.begin(), allowed_keys.end());
  std::vector<MappingField> known;
  for (MappingField& field : mapping->fields) {
    if (std::find(allowed.begin(), allowed.end(), field.key) != allowed.end()) {
      known.push_back(std::move(field));
      continue;
    }
    std::string message = "unknown key '" + field.key + "' in " + std::string(what);
    std::string closest = ClosestName(field.key, allowed);
    if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
    Error(field.key_node, message + "; allowed keys: " + JoinNames(allowed));
  }
  mapping->fields = std::move(known);
  return mapping;
}

void YamlReader::RequireConstant(const Mapping& mapping, std::string_view key, std::string_view expected) {
  const MappingField* field = Require(mapping, key);
  if (field == nullptr) return;
  std::optional<std::string> value = ReadString(*field);
  if (value && *value != expected) {
    Error(field->value,
          "unsupported " + std::string(key) + " '" + *value + "'; expected '" + std::string(expected) + "'");
  }
}

const MappingField* YamlReader::Require(const Mapping& mapping, std::string_view key) {
  if (const MappingField* field = mapping.Find(key)) return field;
  Error(mapping.node, "missing required key '" + std::string(key) + "' in " + mapping.what);
  return nullptr;
}

bool YamlReader::ExpectSequence(const MappingField& field) {
  if (field.value.IsSequence()) return true;
  Error(PositionOf(field), "expected a sequence for '" + field.key + "', got " + Describe(field.value));
  return false;
}

std::optional<std::string> YamlReader::ReadString(const MappingField& field) {
  if (field.value.IsScalar()) return field.value.Scalar();
  Error(PositionOf(field), "expected a string for '" + field.key + "', got " + Describe(field.value));
  return std::nullopt;
}

std::optional<int64_t> YamlReader::ReadInt(const MappingField& field) {
  if (field.value.IsScalar()) {
    if (std::optional<int64_t> value = ParseYamlInt(field.value.Scalar())) return value;
  }
  Error(PositionOf(field), "expected an integer for '" + field.key + "', got " + Describe(field.value));
  return std::nullopt;
}

std::optional<bool> YamlReader::ReadBool(const MappingField& field) {
  if (field.value.IsScalar()) {
    if (std::optional<bool> value = ParseYamlBool(field.value.Scalar())) return value;
  }
  Error(PositionOf(field), "expected true or false for '" + field.key + "', got " + Describe(field.value));
  return std::nullopt;
}

void LoadYamlDocument(YamlReader& reader, const std::function<void(const YAML::Node&)>& walk) {
  try {
    YAML::Node root = YAML::Load(std::string(reader.text()));
    walk(root);
  } catch (const YAML::Exception& e) {
    // yaml-cpp may mark the end of the input: the line after a final newline.
    const std::string_view text = reader.text();
    const int last_line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) +
                          (text.empty() || text.back() == '\n' ? 0 : 1);
    SourcePosition position{reader.file(), 1, 1};
    if (e.mark.line >= 0 && e.mark.column >= 0)
      position = {reader.file(), e.mark.line + 1, e.mark.column + 1};
    if (position.line > std::max(last_line, 1)) {
      const size_t last_start = text.rfind('\n', text.size() >= 2 ? text.size() - 2 : 0);
      position = {
          reader.file(), std::max(last_line, 1),
          static_cast<int>(text.size() - (last_start == std::string_view::npos ? 0 : last_start + 1))};
    }
    // yaml-cpp says "bad file" when its nesting limit stops it.
    const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
    reader.Error(position, deep != nullptr ? "invalid YAML: nested too deeply (" +
                                                 std::to_string(deep->depth()) + " levels)"
                                           : "invalid YAML: " + e.msg);
  }
}

std::optional<int64_t> ParseYamlInt(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || text[0] == '+') return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> ParseYamlBool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::string JoinNames(const std::vector<std::string>& names, std::string_view last_separator) {
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += i + 1 == names.size() ? last_separator : std::string_view(", ");
    joined += names[i];
  }
  return joined;
}

std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    size_t distance = AsciiLower(name) == AsciiLower(candidate) ? 0 : EditDistance(name, candidate);
    if (distance < best_distance && distance < std::max(name.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace ruleplane
