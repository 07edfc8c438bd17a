#include "engine/functions.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

#include "engine/operators.h"
#include "engine/time_util.h"

namespace ruleplane::expr {
namespace {

constexpr FunctionSignature kFunctions[] = {
    {"size", Builtin::kSize, 1, true, true},
    {"startsWith", Builtin::kStartsWith, 2, false, true},
    {"endsWith", Builtin::kEndsWith, 2, false, true},
    {"contains", Builtin::kContains, 2, false, true},
    {"matches", Builtin::kMatches, 2, true, true},
    {"int", Builtin::kInt, 1, true, false},
    {"double", Builtin::kDouble, 1, true, false},
    {"string", Builtin::kString, 1, true, false},
    {"timestamp", Builtin::kTimestamp, 1, true, false},
    {"duration", Builtin::kDuration, 1, true, false},
};

constexpr int64_t kNanosPerSecond = 1000000000;

int64_t CodePointCount(const std::string& text) {
  int64_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

Value Size(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return Value::Int(CodePointCount(v.string_value()));
    case Value::Kind::kList:
      return Value::Int(static_cast<int64_t>(v.list_value().size()));
    case Value::Kind::kMap:
      return Value::Int(static_cast<int64_t>(v.map_value().size()));
    default:
      return NoMatchingOverload("size", {&v});
  }
}

Value StringTest(Builtin builtin, const Value& text, const Value& part) {
  if (!text.is_string() || !part.is_string()) {
    const char* name = builtin == Builtin::kStartsWith ? "startsWith"
                       : builtin == Builtin::kEndsWith ? "endsWith"
                                                       : "contains";
    return NoMatchingOverload(name, {&text, &part});
  }
  const std::string_view s = text.string_value();
  const std::string_view p = part.string_value();
  switch (builtin) {
    case Builtin::kStartsWith:
      return Value::Bool(s.starts_with(p));
    case Builtin::kEndsWith:
      return Value::Bool(s.ends_with(p));
    default:
      return Value::Bool(s.find(p) != std::string_view::npos);
  }
}

Value Matches(const Value& text, const Value& pattern, const Regex* constant_regex, const Limits& limits) {
  if (!text.is_string() || (constant_regex == nullptr && !pattern.is_string())) {
    return NoMatchingOverload("matches", {&text, &pattern});
  }
  if (constant_regex != nullptr) return constant_regex->Matches(text.string_value());
  auto regex = Regex::Compile(pattern.string_value(), limits.regex_match_limit);
  if (!regex.ok()) return Value::Error(regex.error().message);
  return (*regex)->Matches(text.string_value());
}

Value ToInt(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kInt:
      return v;
    case Value::Kind::kDouble: {
      const double d = std::trunc(v.double_value());
      // The valid range is [-2^63, 2^63); both bounds are exact doubles.
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return Value::Error("integer overflow");
      return Value::Int(static_cast<int64_t>(d));
    }
    case Value::Kind::kString: {
      const std::string& s = v.string_value();
      int64_t out = 0;
      const char* begin = s.data();
      if (s.size() > 1 && s[0] == '+' && s[1] != '-') ++begin;
      const auto [end, error] = std::from_chars(begin, s.data() + s.size(), out);
      if (error == std::errc::result_out_of_range) return Value::Error("integer overflow");
      if (error != std::errc() || end != s.data() + s.size() || begin == s.data() + s.size()) {
        return Value::Error("cannot convert string \"" + s + "\" to int");
      }
      return Value::Int(out);
    }
    case Value::Kind::kTimestamp: {
      const int64_t nanos = v.timestamp_value().nanos;
      int64_t seconds = nanos / kNanosPerSecond;
      if (nanos % kNanosPerSecond < 0) --seconds;
      return Value::Int(seconds);
    }
    default:
      return NoMatchingOverload("int", {&v});
  }
}

Value ToDouble(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kDouble:
      return v;
    case Value::Kind::kInt:
      return Value::Double(static_cast<double>(v.int_value()));
    case Value::Kind::kString: {
      const std::string& s = v.string_value();
      double out = 0;
      const char* begin = s.data();
      if (s.size() > 1 && s[0] == '+' && s[1] != '-') ++begin;
      const auto [end, error] = std::from_chars(begin, s.data() + s.size(), out);
      if (error != std::errc() || end != s.data() + s.size()) {
        return Value::Error("cannot convert string \"" + s + "\" to double");
      }
      return Value::Double(out);
    }
    default:
      return NoMatchingOverload("double", {&v});
  }
}

std::string DoubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), d);
  return std::string(buffer, result.ptr);
}

Value ToString(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return v;
    case Value::Kind::kInt:
      return Value::String(std::to_string(v.int_value()));
    case Value::Kind::kDouble:
      return Value::String(DoubleText(v.double_value()));
    case Value::Kind::kBool:
      return Value::String(v.bool_value() ? "true" : "false");
    case Value::Kind::kTimestamp:
      return Value::String(FormatRfc3339(v.timestamp_value()));
    case Value::Kind::kDuration:
      return Value::String(FormatDuration(v.duration_value()));
    default:
      return NoMatchingOverload("string", {&v});
  }
}

Value ToTimestamp(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTimestamp:
      return v;
    case Value::Kind::kString: {
      auto timestamp = ParseRfc3339(v.string_value());
      if (!timestamp.ok()) return Value::Error(timestamp.error().message);
      return Value::MakeTimestamp(*timestamp);
    }
    case Value::Kind::kInt: {
      int64_t nanos;
      if (__builtin_mul_overflow(v.int_value(), kNanosPerSecond, &nanos))
        return Value::Error("timestamp overflow");
      return Value::MakeTimestamp(Timestamp{nanos});
    }
    default:
      return NoMatchingOverload("timestamp", {&v});
  }
}

Value ToDuration(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kDuration:
      return v;
    case Value::Kind::kString: {
      auto duration = ParseDuration(v.string_value());
      if (!duration.ok()) return Value::Error(duration.error().message);
      return Value::MakeDuration(*duration);
    }
    default:
      return NoMatchingOverload("duration", {&v});
  }
}

}  // namespace

const FunctionSignature* FindFunction(std::string_view name) {
  for (const FunctionSignature& signature : kFunctions) {
    if (signature.name == name) return &signature;
  }
  return nullptr;
}

Value CallFunction(Builtin builtin, std::span<const Value* const> arguments, const Regex* constant_regex,
                   const Limits& limits) {
  for (const Value* argument : arguments) {
    if (argument->is_error()) return *argument;
  }
  switch (builtin) {
    case Builtin::kSize:
      return Size(*arguments[0]);
    case Builtin::kStartsWith:
    case Builtin::kEndsWith:
    case Builtin::kContains:
      return StringTest(builtin, *arguments[0], *arguments[1]);
    case Builtin::kMatches:
      return Matches(*arguments[0], *arguments[1], constant_regex, limits);
    case Builtin::kInt:
      return ToInt(*arguments[0]);
    case Builtin::kDouble:
      return ToDouble(*arguments[0]);
    case Builtin::kString:
      return ToString(*arguments[0]);
    case Builtin::kTimestamp:
      return ToTimestamp(*arguments[0]);
    case Builtin::kDuration:
      return ToDuration(*arguments[0]);
  }
  return Value::Error("internal error: unknown function");
}

}  // namespace ruleplane::expr
