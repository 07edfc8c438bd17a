#include "engine/json_value.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "engine/time_util.h"

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
      if (!std::isfinite(value.double_value())) return Json(nullptr);
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

Result<Value> ParseJson(std::string_view text) {
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: <detail>".
    const std::string what = e.what();
    std::string location, detail = what;
    if (const size_t at = what.find(" at line "); at != std::string::npos) {
      if (const size_t colon = what.find(": ", at); colon != std::string::npos) {
        location = " (" + what.substr(at + 4, colon - at - 4) + ")";
        detail = what.substr(colon + 2);
      }
    }
    return Error{
        ErrorCode::kParse, "invalid JSON at byte " + std::to_string(e.byte) + location + ": " + detail, {}};
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kParse, std::string("invalid JSON: ") + e.what(), {}};
  }
  Value out;
  if (!ConvertFromJson(json, kMaxJsonDepth, out)) {
    return Error{ErrorCode::kParse,
                 "invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                 {}};
  }
  return out;
}

std::string FormatJson(const Value& value, int indent) {
  return ValueToOrderedJson(value).dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ruleplane
