#include "engine/common/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

// Kinds that compare with each other share a rank (int and double).
int KindRank(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNull:
      return 0;
    case Value::Kind::kBool:
      return 1;
    case Value::Kind::kInt:
    case Value::Kind::kDouble:
      return 2;
    case Value::Kind::kString:
      return 3;
    case Value::Kind::kTimestamp:
      return 4;
    case Value::Kind::kDuration:
      return 5;
    case Value::Kind::kList:
      return 6;
    case Value::Kind::kMap:
      return 7;
    case Value::Kind::kError:
      return 8;
  }
  return 9;
}

template <typename T>
int ThreeWay(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Exact comparison of an int with a double that is not NaN.
int CompareIntDouble(int64_t i, double d) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (d >= kTwoTo63) return -1;
  if (d < -kTwoTo63) return 1;
  const auto truncated = static_cast<int64_t>(d);
  if (i != truncated) return i < truncated ? -1 : 1;
  const double fraction = d - static_cast<double>(truncated);
  return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0);
}

// Numbers in a total order: NaN after every other number and equal to itself.
int CompareNumbers(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) return ThreeWay(a.int_value(), b.int_value());
  if (a.is_int()) {
    const double d = b.double_value();
    return std::isnan(d) ? -1 : CompareIntDouble(a.int_value(), d);
  }
  if (b.is_int()) {
    const double d = a.double_value();
    return std::isnan(d) ? 1 : -CompareIntDouble(b.int_value(), d);
  }
  const double x = a.double_value(), y = b.double_value();
  if (std::isnan(x) || std::isnan(y)) return ThreeWay(std::isnan(x), std::isnan(y));
  return ThreeWay(x, y);
}

std::vector<const std::pair<Value, Value>*> SortedEntries(const Value::Map& map) {
  std::vector<const std::pair<Value, Value>*> entries;
  entries.reserve(map.size());
  for (const auto& entry : map) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const auto* a, const auto* b) { return Value::Compare(a->first, b->first) < 0; });
  return entries;
}

void AppendQuoted(const std::string& text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\x";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void AppendDouble(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "double(\"NaN\")";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "double(\"Infinity\")" : "double(\"-Infinity\")";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), d);
  const std::string_view text(buffer, result.ptr - buffer);
  out += text;
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void AppendDebugString(const Value& value, std::string& out) {
  switch (value.kind()) {
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += value.bool_value() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(value.int_value());
      return;
    case Value::Kind::kDouble:
      AppendDouble(value.double_value(), out);
      return;
    case Value::Kind::kString:
      AppendQuoted(value.string_value(), out);
      return;
    case Value::Kind::kList: {
      out += '[';
      bool first = true;
      for (const Value& item : value.list_value()) {
        if (!first) out += ", ";
        first = false;
        AppendDebugString(item, out);
      }
      out += ']';
      return;
    }
    case Value::Kind::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.map_value()) {
        if (!first) out += ", ";
        first = false;
        AppendDebugString(key, out);
        out += ": ";
        AppendDebugString(item, out);
      }
      out += '}';
      return;
    }
    case Value::Kind::kTimestamp:
      out += "timestamp(\"" + FormatRfc3339(value.timestamp_value()) + "\")";
      return;
    case Value::Kind::kDuration:
      out += "duration(\"" + FormatDuration(value.duration_value()) + "\")";
      return;
    case Value::Kind::kError:
      out += "error(";
      AppendQuoted(value.error_message(), out);
      out += ')';
      return;
  }
}

}  // namespace

const Value* Value::FindPath(std::initializer_list<std::string_view> keys) const {
  const Value* at = this;
  for (std::string_view key : keys) {
    if ((at = at->Find(key)) == nullptr) return nullptr;
  }
  return at;
}

const Value* Value::Find(std::string_view key) const {
  if (kind_ != Kind::kMap) return nullptr;
  for (const auto& [entry_key, entry_value] : map_value()) {
    if (entry_key.is_string() && entry_key.string_value() == key) return &entry_value;
  }
  return nullptr;
}

const Value* Value::Find(const Value& key) const {
  if (kind_ != Kind::kMap) return nullptr;
  if (key.is_string()) return Find(std::string_view(key.string_value()));
  for (const auto& [entry_key, entry_value] : map_value()) {
    if (entry_key == key) return &entry_value;
  }
  return nullptr;
}

const char* Value::TypeName() const {
  switch (kind_) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kTimestamp:
      return "google.protobuf.Timestamp";
    case Kind::kDuration:
      return "google.protobuf.Duration";
    case Kind::kError:
      return "error";
  }
  return "unknown";
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.kind() != b.kind()) {
    const bool numbers = (a.is_int() || a.is_double()) && (b.is_int() || b.is_double());
    if (!numbers) return false;
    const double d = a.is_double() ? a.double_value() : b.double_value();
    const int64_t i = a.is_int() ? a.int_value() : b.int_value();
    return !std::isnan(d) && CompareIntDouble(i, d) == 0;
  }
  switch (a.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return a.bool_value() == b.bool_value();
    case Kind::kInt:
      return a.int_value() == b.int_value();
    case Kind::kDouble:
      return a.double_value() == b.double_value();
    case Kind::kString:
      return a.string_value() == b.string_value();
    case Kind::kList:
      return a.list_value() == b.list_value();
    case Kind::kMap: {
      if (a.map_value().size() != b.map_value().size()) return false;
      for (const auto& [key, value] : a.map_value()) {
        const Value* other = b.Find(key);
        if (other == nullptr || !(*other == value)) return false;
      }
      return true;
    }
    case Kind::kTimestamp:
      return a.timestamp_value() == b.timestamp_value();
    case Kind::kDuration:
      return a.duration_value() == b.duration_value();
    case Kind::kError:
      return a.error_message() == b.error_message();
  }
  return false;
}

int Value::Compare(const Value& a, const Value& b) {
  const int rank_a = KindRank(a.kind()), rank_b = KindRank(b.kind());
  if (rank_a != rank_b) return ThreeWay(rank_a, rank_b);
  switch (a.kind()) {
    case Kind::kNull:
      return 0;
    case Kind::kBool:
      return ThreeWay(a.bool_value(), b.bool_value());
    case Kind::kInt:
    case Kind::kDouble:
      return CompareNumbers(a, b);
    case Kind::kString:
      return ThreeWay(a.string_value().compare(b.string_value()), 0);
    case Kind::kTimestamp:
      return ThreeWay(a.timestamp_value(), b.timestamp_value());
    case Kind::kDuration:
      return ThreeWay(a.duration_value(), b.duration_value());
    case Kind::kList: {
      const List& x = a.list_value();
      const List& y = b.list_value();
      for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (const int c = Compare(x[i], y[i]); c != 0) return c;
      }
      return ThreeWay(x.size(), y.size());
    }
    case Kind::kMap: {
      // Insertion order does not matter to equality, so compare sorted entries.
      const auto x = SortedEntries(a.map_value());
      const auto y = SortedEntries(b.map_value());
      for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (const int c = Compare(x[i]->first, y[i]->first); c != 0) return c;
        if (const int c = Compare(x[i]->second, y[i]->second); c != 0) return c;
      }
      return ThreeWay(x.size(), y.size());
    }
    case Kind::kError:
      return ThreeWay(a.error_message().compare(b.error_message()), 0);
  }
  return 0;
}

std::string Value::DebugString() const {
  std::string out;
  AppendDebugString(*this, out);
  return out;
}

}  // namespace ruleplane
