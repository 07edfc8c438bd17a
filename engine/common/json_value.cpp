#include "engine/common/json_value.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

constexpr int kMaxJsonDepth = 512;

// Converts `json`; false when it nests deeper than `depth_left` allows.
template <typename Json>
bool ConvertFromJson(const Json& json, int depth_left, Value& out) {
  if (depth_left < 0) return false;
  switch (json.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      out = Value::Null();
      return true;
    case Json::value_t::boolean:
      out = Value::Bool(json.template get<bool>());
      return true;
    case Json::value_t::number_integer:
      out = Value::Int(json.template get<int64_t>());
      return true;
    case Json::value_t::number_unsigned: {
      const auto u = json.template get<uint64_t>();
      out = u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                ? Value::Int(static_cast<int64_t>(u))
                : Value::Double(static_cast<double>(u));
      return true;
    }
    case Json::value_t::number_float:
      out = Value::Double(json.template get<double>());
      return true;
    case Json::value_t::string:
      out = Value::String(json.template get_ref<const std::string&>());
      return true;
    case Json::value_t::binary:
      out = Value::Null();
      return true;
    case Json::value_t::array: {
      Value::List items;
      items.reserve(json.size());
      for (const auto& element : json) {
        Value item;
        if (!ConvertFromJson(element, depth_left - 1, item)) return false;
        items.push_back(std::move(item));
      }
      out = Value::MakeList(std::move(items));
      return true;
    }
    case Json::value_t::object: {
      Value::Map entries;
      entries.reserve(json.size());
      for (auto it = json.begin(); it != json.end(); ++it) {
        Value item;
        if (!ConvertFromJson(it.value(), depth_left - 1, item)) return false;
        entries.emplace_back(Value::String(it.key()), std::move(item));
      }
      out = Value::MakeMap(std::move(entries));
      return true;
    }
  }
  out = Value::Null();
  return true;
}

std::string MapKeyText(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString:
      return key.string_value();
    case Value::Kind::kInt:
      return std::to_string(key.int_value());
    case Value::Kind::kBool:
      return key.bool_value() ? "true" : "false";
    default:
      return key.DebugString();
  }
}

template <typename Json>
Json ConvertToJson(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNull:
      return Json(nullptr);
    case Value::Kind::kBool:
      return Json(value.bool_value());
    case Value::Kind::kInt:
      return Json(value.int_value());
    case Value::Kind::kDouble:
      // As CEL's (and protobuf's) JSON mapping writes them.
      if (std::isnan(value.double_value())) return Json("NaN");
      if (std::isinf(value.double_value())) return Json(value.double_value() > 0 ? "Infinity" : "-Infinity");
      return Json(value.double_value());
    case Value::Kind::kString:
      return Json(value.string_value());
    case Value::Kind::kList: {
      Json array = Json::array();
      for (const Value& item : value.list_value()) array.push_back(ConvertToJson<Json>(item));
      return array;
    }
    case Value::Kind::kMap: {
      Json object = Json::object();
      for (const auto& [key, item] : value.map_value()) object[MapKeyText(key)] = ConvertToJson<Json>(item);
      return object;
    }
    case Value::Kind::kTimestamp:
      return Json(FormatRfc3339(value.timestamp_value()));
    case Value::Kind::kDuration:
      return Json(FormatDuration(value.duration_value()));
    case Value::Kind::kError: {
      Json object = Json::object();
      object["error"] = value.error_message();
      return object;
    }
  }
  return Json(nullptr);
}

}  // namespace

Value ValueFromJson(const nlohmann::json& json) {
  Value out;
  ConvertFromJson(json, std::numeric_limits<int>::max(), out);
  return out;
}

Value ValueFromJson(const nlohmann::ordered_json& json) {
  Value out;
  ConvertFromJson(json, std::numeric_limits<int>::max(), out);
  return out;
}

nlohmann::json ValueToJson(const Value& value) { return ConvertToJson<nlohmann::json>(value); }

nlohmann::ordered_json ValueToOrderedJson(const Value& value) {
  return ConvertToJson<nlohmann::ordered_json>(value);
}

namespace {

// Builds Values straight from nlohmann's SAX events: no JSON DOM in between.
class ValueBuilder {
 public:
  using Json = nlohmann::ordered_json;

  bool null() { return Add(Value::Null()); }
  bool boolean(bool value) { return Add(Value::Bool(value)); }
  bool number_integer(Json::number_integer_t value) { return Add(Value::Int(value)); }
  bool number_unsigned(Json::number_unsigned_t value) {
    return Add(value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                   ? Value::Int(static_cast<int64_t>(value))
                   : Value::Double(static_cast<double>(value)));
  }
  bool number_float(Json::number_float_t value, const std::string&) { return Add(Value::Double(value)); }
  bool string(std::string& value) { return Add(Value::String(std::move(value))); }
  bool binary(Json::binary_t&) { return Add(Value::Null()); }
  bool start_object(std::size_t) { return Open(true); }
  bool key(std::string& key) {
    open_.back().key = Value::String(std::move(key));
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Open(false); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: <detail>", or
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'" with no position.
    const std::string what = e.what();
    std::string detail = what;
    if (const size_t at = what.find(" at line "); at != std::string::npos) {
      if (const size_t colon = what.find(": ", at); colon != std::string::npos)
        detail = what.substr(colon + 2);
    } else if (const size_t tag_end = what.find("] ");
               what.starts_with("[json.") && tag_end != std::string::npos) {
      detail = what.substr(tag_end + 2);
    }
    error_byte_ = byte;
    error_ = detail;
    return false;
  }

  size_t error_byte() const { return error_byte_; }
  const std::string& error() const { return error_; }
  Value& result() { return result_; }

 private:
  struct Container {
    bool object = false;
    Value::List items;
    Value::Map entries;
    Value key;
    // Duplicate keys: the last value wins, at the first one's place, as with
    // nlohmann's own parser. A 64-bit filter of the keys seen spares the
    // search for nearly every key; large objects index their keys instead.
    uint64_t seen = 0;
    std::unordered_map<std::string_view, size_t> index;
  };
  static constexpr size_t kIndexFrom = 32;

  // Where `key` already is in `object`, or nullptr.
  static Value* Existing(Container& object, std::string_view key) {
    if (object.entries.size() >= kIndexFrom) {
      if (object.index.empty()) {
        for (size_t i = 0; i < object.entries.size(); ++i)
          object.index.emplace(object.entries[i].first.string_value(), i);
      }
      const auto it = object.index.find(key);
      return it == object.index.end() ? nullptr : &object.entries[it->second].second;
    }
    const uint64_t bit =
        uint64_t{1} << ((key.size() * 7 + (key.empty() ? 0 : key.front() + key.back() * 3)) % 64);
    if ((object.seen & bit) == 0) {
      object.seen |= bit;
      return nullptr;
    }
    for (auto& [existing, value] : object.entries) {
      if (existing.string_value() == key) return &value;
    }
    return nullptr;
  }

  bool TooDeep() {
    if (open_.size() <= kMaxJsonDepth) return false;
    error_ = "invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return true;
  }
  bool Add(Value value) {
    if (TooDeep()) return false;
    if (open_.empty()) {
      result_ = std::move(value);
    } else if (Container& parent = open_.back(); parent.object) {
      if (Value* existing = Existing(parent, parent.key.string_value())) {
        *existing = std::move(value);
      } else {
        parent.entries.emplace_back(std::move(parent.key), std::move(value));
        if (!parent.index.empty())
          parent.index.emplace(parent.entries.back().first.string_value(), parent.entries.size() - 1);
      }
    } else {
      parent.items.push_back(std::move(value));
    }
    return true;
  }
  bool Open(bool object) {
    if (TooDeep()) return false;
    open_.emplace_back().object = object;
    return true;
  }
  bool Close() {
    Container done = std::move(open_.back());
    open_.pop_back();
    return Add(done.object ? Value::MakeMap(std::move(done.entries))
                           : Value::MakeList(std::move(done.items)));
  }

  std::vector<Container> open_;
  Value result_;
  std::string error_;
  size_t error_byte_ = 0;
};

// "invalid JSON at line L, column C (byte B): detail"; `byte` counts from 1.
Error JsonError(std::string_view text, size_t byte, const std::string& detail) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const size_t column = byte > line_start ? byte - line_start : 1;
  return Error{ErrorCode::kParse,
               "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                   " (byte " + std::to_string(byte) + "): " + detail,
               SourcePosition{"", static_cast<int>(line), static_cast<int>(column)}};
}

}  // namespace

Result<Value> ParseJson(std::string_view text) {
  // nlohmann's lexer takes a NUL byte for the end of the input.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return JsonError(text, nul + 1, "a NUL byte (JSON text cannot contain one)");
  }
  ValueBuilder builder;
  bool parsed = false;
  try {
    parsed = nlohmann::ordered_json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kParse, std::string("invalid JSON: ") + e.what(), {}};
  }
  if (!parsed && builder.error_byte() > 0) return JsonError(text, builder.error_byte(), builder.error());
  if (!parsed) return Error{ErrorCode::kParse, builder.error(), {}};
  return std::move(builder.result());
}

std::string FormatJson(const Value& value, int indent) {
  return ValueToOrderedJson(value).dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ruleplane
