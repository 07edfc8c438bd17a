#include "engine/rule_file/yaml_value.h"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "engine/rule_file/lexical.h"
#include "engine/rule_file/yaml_reader.h"

namespace ruleplane {
namespace {

constexpr int kMaxDepth = 100;

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?" || node.Tag().empty(); }

std::optional<double> ParseYamlFloat(const std::string& text) {
  if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf") return HUGE_VAL;
  if (text == "-.inf" || text == "-.Inf" || text == "-.INF") return -HUGE_VAL;
  if (text == ".nan" || text == ".NaN" || text == ".NAN") return std::nan("");
  return ParseDecimalFloat(text);
}

class Converter {
 public:
  Converter(const std::string& file, YamlExpansion& expansion) : file_(file), expansion_(expansion) {}

  Result<Value> Convert(const YAML::Node& node, int depth) {
    if (depth > kMaxDepth) return Fail(node, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    const int64_t bytes = node.IsScalar() ? static_cast<int64_t>(node.Scalar().size()) : 0;
    if (--expansion_.values_left < 0 || (expansion_.bytes_left -= bytes) < 0) {
      return Fail(node, "the file's data expands to more than " +
                            std::to_string(YamlExpansion{}.values_left) + " values or " +
                            std::to_string(YamlExpansion{}.bytes_left >> 20) +
                            " MiB of text (aliases repeat what they refer to)");
    }
    if (node.IsSequence()) {
      Value::List items;
      for (const YAML::Node& item : node) {
        Result<Value> converted = Convert(item, depth + 1);
        if (!converted) return converted;
        items.push_back(std::move(converted).value());
      }
      return Value::MakeList(std::move(items));
    }
    if (node.IsMap()) {
      Value::Map entries;
      for (auto it = node.begin(); it != node.end(); ++it) {
        YAML::Node key = it->first;  // copies: `it->` yields a temporary
        YAML::Node value = it->second;
        if (!key.IsScalar()) return Fail(key, "expected a string key");
        Result<Value> converted = Convert(value, depth + 1);
        if (!converted) return converted;
        entries.emplace_back(Value::String(key.Scalar()), std::move(converted).value());
      }
      return Value::MakeMap(std::move(entries));
    }
    return YamlScalarToValue(node);
  }

 private:
  Error Fail(const YAML::Node& node, std::string message) const {
    YAML::Mark mark = node.Mark();
    return Error{
        ErrorCode::kInvalidRuleFile, std::move(message),
        SourcePosition{file_, mark.line < 0 ? 1 : mark.line + 1, mark.column < 0 ? 1 : mark.column + 1}};
  }

  const std::string& file_;
  YamlExpansion& expansion_;
};

}  // namespace

Value YamlScalarToValue(const YAML::Node& node) {
  if (node.IsNull()) return Value::Null();
  if (!node.IsScalar()) return Value::Null();
  const std::string& text = node.Scalar();
  if (!IsPlain(node)) return Value::String(text);
  if (std::optional<bool> b = ParseYamlBool(text)) return Value::Bool(*b);
  if (std::optional<int64_t> i = ParseYamlInt(text)) return Value::Int(*i);
  if (std::optional<double> d = ParseYamlFloat(text)) return Value::Double(*d);
  return Value::String(text);
}

Result<Value> YamlToValue(const YAML::Node& node, const std::string& file, YamlExpansion& expansion) {
  return Converter(file, expansion).Convert(node, 0);
}

}  // namespace ruleplane
