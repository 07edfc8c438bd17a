// Conversion between JSON and Values, shared by snapshots, `eval` and plans.
//
//   auto value = ParseJson(R"({"replicas": 3, "ready": true})");
//   std::string text = FormatJson(*value);   // {"replicas":3,"ready":true}
//
// JSON integers become ints (unsigned ones above INT64_MAX become doubles),
// other numbers doubles. Object key order is kept by ParseJson and FormatJson.
// Going back to JSON, timestamps become RFC 3339 strings, durations CEL's
// "300s" form, map keys their text, non-finite doubles the strings "NaN",
// "Infinity" and "-Infinity" (CEL's JSON mapping), and an error value
// {"error": "<message>"}.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

Value ValueFromJson(const nlohmann::json& json);
Value ValueFromJson(const nlohmann::ordered_json& json);

nlohmann::json ValueToJson(const Value& value);
nlohmann::ordered_json ValueToOrderedJson(const Value& value);

// Parses JSON text, keeping key order. Bad JSON is a kParse error whose
// message names the byte (1-based), line and column: "invalid JSON at byte 13
// (line 1, column 13): syntax error ...". Nesting deeper than 512 levels is
// refused.
Result<Value> ParseJson(std::string_view text);

// Serializes with key order kept: compact when indent < 0, else pretty-printed.
// Invalid UTF-8 in strings is replaced, never an error.
std::string FormatJson(const Value& value, int indent = -1);

}  // namespace ruleplane
