#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {

std::string FieldText(const Value& object, std::initializer_list<std::string_view> keys,
                      const std::string& fallback) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() && !value->string_value().empty() ? value->string_value()
                                                                                  : fallback;
}

int64_t FieldInt(const Value& object, std::initializer_list<std::string_view> keys, int64_t fallback) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_int() ? value->int_value() : fallback;
}

Value::List FieldList(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* list = ValueAt(object, keys);
  return list != nullptr && list->is_list() ? list->list_value() : Value::List{};
}

bool OwnedBy(const Value& object, const std::string& owner_uid) {
  if (owner_uid.empty()) return false;
  for (const Value& owner : FieldList(object, {"metadata", "ownerReferences"}))
    if (FieldText(owner, {"uid"}) == owner_uid) return true;
  return false;
}

Value WithField(const Value& map, const std::string& key, Value value) {
  Value::Map entries = map.is_map() ? map.map_value() : Value::Map{};
  for (auto& [name, item] : entries) {
    if (name.is_string() && name.string_value() == key) {
      item = std::move(value);
      return Value::MakeMap(std::move(entries));
    }
  }
  entries.emplace_back(Value::String(key), std::move(value));
  return Value::MakeMap(std::move(entries));
}

}  // namespace ruleplane
