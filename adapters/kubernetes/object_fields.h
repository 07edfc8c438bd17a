// Reading and setting fields of Kubernetes objects held as Values (objects as
// the API returned them): what the action handlers and the templates share.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "engine/common/value.h"

namespace ruleplane {

// The string at `keys`, or `fallback` when it is absent, not a string or empty.
std::string FieldText(const Value& object, std::initializer_list<std::string_view> keys,
                      const std::string& fallback = "");

// The integer at `keys`, or `fallback` when it is absent or not an integer.
int64_t FieldInt(const Value& object, std::initializer_list<std::string_view> keys, int64_t fallback);

// The list at `keys`, or an empty list when it is absent or not a list.
Value::List FieldList(const Value& object, std::initializer_list<std::string_view> keys);

// Whether one of the object's ownerReferences names `owner_uid` (never for "").
bool OwnedBy(const Value& object, const std::string& owner_uid);

// `map` with `key` set to `value` (added at the end when absent).
Value WithField(const Value& map, const std::string& key, Value value);

}  // namespace ruleplane
