// ConvertParam (declared in compiled_rule_set.h): a param value as given on
// the command line, in a snapshot or in a rule-file test, to its declared type.
#include <charconv>
#include <string>
#include <string_view>

#include "engine/common/time_util.h"
#include "engine/match/compiled_rule_set.h"

namespace ruleplane {
namespace {

Error ConversionError(const Param& param, const Value& given, const std::string& detail) {
  std::string message = "param '" + param.name + "' of type " + ParamTypeName(param.type) + " cannot be " +
                        (given.is_string() ? "\"" + given.string_value() + "\"" : given.DebugString()) +
                        " (" + given.TypeName() + ")";
  if (!detail.empty()) message += ": " + detail;
  return Error{ErrorCode::kInvalidArgument, std::move(message), {}};
}

template <typename Number>
bool ParseWhole(std::string_view text, Number& out) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<Value> ConvertParam(const Param& param, const Value& given) {
  if (given.is_error()) return ConversionError(param, given, given.error_message());
  const bool text = given.is_string();
  switch (param.type) {
    case ParamType::kBool:
      if (given.is_bool()) return given;
      if (text && given.string_value() == "true") return Value::Bool(true);
      if (text && given.string_value() == "false") return Value::Bool(false);
      break;
    case ParamType::kInt: {
      if (given.is_int()) return given;
      int64_t parsed = 0;
      if (text && ParseWhole(given.string_value(), parsed)) return Value::Int(parsed);
      break;
    }
    case ParamType::kDouble: {
      if (given.is_double()) return given;
      if (given.is_int()) return Value::Double(static_cast<double>(given.int_value()));
      double parsed = 0;
      if (text && ParseWhole(given.string_value(), parsed)) return Value::Double(parsed);
      break;
    }
    case ParamType::kString:
      if (text) return given;
      break;
    case ParamType::kDuration: {
      if (given.kind() == Value::Kind::kDuration) return given;
      if (!text) break;
      auto parsed = ParseDuration(given.string_value());
      if (!parsed.ok()) return ConversionError(param, given, parsed.error().message);
      return Value::MakeDuration(*parsed);
    }
    case ParamType::kTimestamp: {
      if (given.kind() == Value::Kind::kTimestamp) return given;
      if (!text) break;
      auto parsed = ParseRfc3339(given.string_value());
      if (!parsed.ok()) return ConversionError(param, given, parsed.error().message);
      return Value::MakeTimestamp(*parsed);
    }
  }
  return ConversionError(param, given, "");
}

}  // namespace ruleplane
