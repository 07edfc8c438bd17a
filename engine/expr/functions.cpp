#include "engine/expr/functions.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

#include "engine/common/time_util.h"
#include "engine/expr/budget.h"
#include "engine/expr/operators.h"
#include "engine/expr/regex.h"
#include "engine/extensions/backup_listing.h"
#include "engine/extensions/cron_schedule.h"
#include "engine/extensions/string_functions.h"

namespace ruleplane::expr {
namespace {

using enum ArgumentKind;

// Overloads of one name are adjacent.
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
    {"split", Builtin::kSplit, 2, false, true, {kString, kString}},
    {"split", Builtin::kSplit, 3, false, true, {kString, kString, kInt}},
    {"substring", Builtin::kSubstring, 2, false, true, {kString, kInt}},
    {"substring", Builtin::kSubstring, 3, false, true, {kString, kInt, kInt}},
    {"indexOf", Builtin::kIndexOf, 2, false, true, {kString, kString}},
    {"indexOf", Builtin::kIndexOf, 3, false, true, {kString, kString, kInt}},
    {"lastIndexOf", Builtin::kLastIndexOf, 2, false, true, {kString, kString}},
    {"lowerAscii", Builtin::kLowerAscii, 1, false, true, {kString}},
    {"upperAscii", Builtin::kUpperAscii, 1, false, true, {kString}},
    {"replace", Builtin::kReplace, 3, false, true, {kString, kString, kString}},
    {"replace", Builtin::kReplace, 4, false, true, {kString, kString, kString, kInt}},
    {"trim", Builtin::kTrim, 1, false, true, {kString}},
    {"join", Builtin::kJoin, 1, false, true, {kList}},
    {"join", Builtin::kJoin, 2, false, true, {kList, kString}},
    {"cronNext", Builtin::kCronNext, 2, true, false, {kString, kTimestamp}},
    {"backups", Builtin::kBackups, 1, true, false, {kList}},
    {"parseBackupName", Builtin::kParseBackupName, 1, true, false, {kString}},
    {"lists.range", Builtin::kListsRange, 1, true, false, {kInt}},
    {"math.greatest", Builtin::kMathGreatest, 1, true, false, {kList}},
};

bool Accepts(ArgumentKind kind, const Value& value) {
  switch (kind) {
    case kAny:
      return true;
    case kString:
      return value.is_string();
    case kInt:
      return value.is_int();
    case kList:
      return value.is_list();
    case kTimestamp:
      return value.kind() == Value::Kind::kTimestamp;
  }
  return false;
}

const char* KindName(ArgumentKind kind) {
  switch (kind) {
    case kString:
      return "string";
    case kInt:
      return "int";
    case kList:
      return "list";
    case kTimestamp:
      return "timestamp";
    case kAny:
      break;
  }
  return "any";
}

Value NoOverload(std::string_view name, std::span<const Value* const> arguments) {
  std::string message = "no matching overload for '" + std::string(name) + "' applied to (";
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i > 0) message += ", ";
    message += arguments[i]->TypeName();
  }
  return Value::Error(message + ")");
}

// A string that would not fit in the budget: the budget is spent, so that
// nothing can absorb the error.
Value TooLarge(Budget& budget) {
  budget.Charge(budget.limit() - budget.used() + 1);
  return Value::Error(budget.Message());
}

// lists.range(n): [0, 1, ..., n - 1]; empty for n <= 0, as cel-go's.
Value ListsRange(int64_t n, Budget& budget) {
  if (!budget.Fits(n)) return TooLarge(budget);
  Value::List items;
  items.reserve(n > 0 ? static_cast<size_t>(n) : 0);
  for (int64_t i = 0; i < n; ++i) items.push_back(Value::Int(i));
  return Value::MakeList(std::move(items));
}

// cel-go's math.greatest over a list: its greatest int, or its greatest
// double; one pass, so that "the newest snapshot" is linear in the store.
Value MathGreatest(const Value& list) {
  const Value::List& items = list.list_value();
  if (items.empty()) return Value::Error("math.greatest() requires at least one argument");
  const Value* greatest = &items.front();
  for (const Value& item : items) {
    if (item.kind() != items.front().kind() || (!item.is_int() && item.kind() != Value::Kind::kDouble)) {
      return Value::Error("math.greatest() takes a list of ints or a list of doubles");
    }
    if (item.is_int() ? item.int_value() > greatest->int_value()
                      : item.double_value() > greatest->double_value())
      greatest = &item;
  }
  return *greatest;
}

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

Value Matches(const Value& text, const Value& pattern, const Regex* constant_regex, const Limits& limits,
              Budget& budget) {
  if (!text.is_string() || (constant_regex == nullptr && !pattern.is_string())) {
    return NoMatchingOverload("matches", {&text, &pattern});
  }
  if (constant_regex != nullptr) return constant_regex->Matches(text.string_value(), budget);
  if (!budget.Charge(static_cast<int64_t>(pattern.string_value().size())))
    return Value::Error(budget.Message());
  // Patterns that are not constants are nearly always params, the same on
  // every call: the last few compiled ones are kept, per thread.
  struct Compiled {
    std::string pattern;
    uint32_t match_limit;
    std::shared_ptr<const Regex> regex;
  };
  thread_local std::vector<Compiled> recent;
  const std::string& wanted = pattern.string_value();
  for (const Compiled& compiled : recent) {
    if (compiled.match_limit == limits.regex_match_limit && compiled.pattern == wanted) {
      return compiled.regex->Matches(text.string_value(), budget);
    }
  }
  auto regex = Regex::Compile(wanted, limits.regex_match_limit);
  if (!regex.ok()) return Value::Error(regex.error().message);
  constexpr size_t kRecent = 8;
  if (recent.size() == kRecent) recent.erase(recent.begin());
  recent.push_back(Compiled{wanted, limits.regex_match_limit, *regex});
  return (*regex)->Matches(text.string_value(), budget);
}

Value CronNext(const CronSchedule* prepared, const Value& schedule, const Value& after) {
  std::optional<CronSchedule> parsed_here;
  if (prepared == nullptr) {
    auto parsed = CronSchedule::Parse(schedule.string_value());
    if (!parsed.ok()) return Value::Error(parsed.error().message);
    prepared = &parsed_here.emplace(std::move(parsed).value());
  }
  auto next = prepared->Next(after.timestamp_value());
  if (!next.ok()) return Value::Error(next.error().message);
  return Value::MakeTimestamp(*next);
}

std::string DoubleText(double d);

Value ToInt(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kInt:
      return v;
    case Value::Kind::kDouble: {
      const double d = std::trunc(v.double_value());
      // CEL's range is (-2^63, 2^63), both ends excluded as in cel-go and the
      // conformance suite; NaN fails the test too.
      if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) {
        return Value::Error("range error: " + DoubleText(v.double_value()) + " does not fit in an int");
      }
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
    case Value::Kind::kTimestamp:
      return Value::Int(v.timestamp_value().seconds);
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
      auto timestamp = TimestampFromUnixSeconds(v.int_value());
      if (!timestamp.ok()) return Value::Error(timestamp.error().message);
      return Value::MakeTimestamp(*timestamp);
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

std::span<const FunctionSignature> FindOverloads(std::string_view name) {
  const FunctionSignature* first =
      std::find_if(std::begin(kFunctions), std::end(kFunctions),
                   [name](const FunctionSignature& f) { return f.name == name; });
  const FunctionSignature* last = std::find_if(first, std::end(kFunctions),
                                               [name](const FunctionSignature& f) { return f.name != name; });
  return {first, last};
}

std::optional<ArgumentError> PrepareCall(Node& call, const Limits& limits) {
  const FunctionSignature& function = *call.function;
  const auto constant = [&call](int i) -> const Value* {
    const Node& child = *call.children[i];
    return child.kind == Node::Kind::kConstant ? &child.value : nullptr;
  };
  for (int i = 0; i < function.arguments; ++i) {
    const Value* value = constant(i);
    if (value != nullptr && !Accepts(function.kinds[i], *value)) {
      return ArgumentError{i, "wrong argument to '" + std::string(function.name) + "': expected " +
                                  KindName(function.kinds[i]) + ", got " + value->TypeName()};
    }
  }
  const auto negative = [&](int i) { return constant(i) != nullptr && constant(i)->int_value() < 0; };
  switch (function.builtin) {
    case Builtin::kMatches:
      if (const Value* pattern = constant(1); pattern != nullptr && pattern->is_string()) {
        auto regex = Regex::Compile(pattern->string_value(), limits.regex_match_limit);
        if (!regex.ok()) return ArgumentError{1, regex.error().message};
        call.regex = std::move(*regex);
      }
      break;
    case Builtin::kCronNext:
      if (const Value* schedule = constant(0)) {
        auto parsed = CronSchedule::Parse(schedule->string_value());
        if (!parsed.ok()) return ArgumentError{0, parsed.error().message};
        call.schedule = std::make_shared<const CronSchedule>(std::move(parsed).value());
      }
      break;
    case Builtin::kSubstring:
    case Builtin::kIndexOf:
      for (int i = 1; i < function.arguments; ++i) {
        if (i == 1 && function.builtin == Builtin::kIndexOf) continue;  // the substring, not an index
        if (negative(i)) {
          return ArgumentError{i, std::string(function.name) +
                                      ": index out of range: " + std::to_string(constant(i)->int_value())};
        }
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

Value CallFunction(const Node& call, std::span<const Value* const> arguments, const Limits& limits,
                   Budget& budget) {
  for (const Value* argument : arguments) {
    if (argument->is_error()) return *argument;
  }
  const FunctionSignature& function = *call.function;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!Accepts(function.kinds[i], *arguments[i])) return NoOverload(function.name, arguments);
  }
  const size_t count = arguments.size();
  const auto string_at = [&](size_t i) -> std::string_view { return arguments[i]->string_value(); };
  const auto int_at = [&](size_t i, int64_t absent) {
    return i < count ? arguments[i]->int_value() : absent;
  };
  switch (function.builtin) {
    case Builtin::kSize:
      return Size(*arguments[0]);
    case Builtin::kStartsWith:
    case Builtin::kEndsWith:
    case Builtin::kContains:
      return StringTest(function.builtin, *arguments[0], *arguments[1]);
    case Builtin::kMatches:
      return Matches(*arguments[0], *arguments[1], call.regex.get(), limits, budget);
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
    case Builtin::kSplit:
      return SplitString(*arguments[0], string_at(1), int_at(2, -1));
    case Builtin::kSubstring:
      return Substring(*arguments[0], arguments[1]->int_value(),
                       count > 2 ? std::optional<int64_t>(arguments[2]->int_value()) : std::nullopt);
    case Builtin::kIndexOf:
      return IndexOf(*arguments[0], string_at(1), int_at(2, 0));
    case Builtin::kLastIndexOf:
      return LastIndexOf(*arguments[0], string_at(1));
    case Builtin::kLowerAscii:
      return LowerAscii(*arguments[0]);
    case Builtin::kUpperAscii:
      return UpperAscii(*arguments[0]);
    case Builtin::kReplace:
      if (!budget.Fits(ReplacedSize(*arguments[0], string_at(1), string_at(2), int_at(3, -1)))) {
        return TooLarge(budget);
      }
      return ReplaceString(*arguments[0], string_at(1), string_at(2), int_at(3, -1));
    case Builtin::kTrim:
      return TrimString(*arguments[0]);
    case Builtin::kJoin:
      if (!budget.Fits(JoinedSize(*arguments[0], count > 1 ? string_at(1) : std::string_view()))) {
        return TooLarge(budget);
      }
      return JoinStrings(*arguments[0], count > 1 ? string_at(1) : std::string_view());
    case Builtin::kCronNext:
      return CronNext(call.schedule.get(), *arguments[0], *arguments[1]);
    case Builtin::kBackups:
      return ListBackups(*arguments[0]);
    case Builtin::kParseBackupName:
      return BackupNameValue(*arguments[0]);
    case Builtin::kListsRange:
      return ListsRange(arguments[0]->int_value(), budget);
    case Builtin::kMathGreatest:
      return MathGreatest(*arguments[0]);
  }
  return Value::Error("internal error: unknown function");
}

}  // namespace ruleplane::expr
