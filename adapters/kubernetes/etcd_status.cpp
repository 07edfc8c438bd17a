#include "adapters/kubernetes/etcd_status.h"

#include <algorithm>

namespace ruleplane {
namespace {

bool SameField(const Value& a, const Value& b, std::string_view key) {
  const Value* left = a.Find(key);
  const Value* right = b.Find(key);
  return left == nullptr ? right == nullptr : right != nullptr && *left == *right;
}

}  // namespace

Value::List WithStatusEntry(Value::List list, std::string_view key, const Value& fields) {
  const Value* name = fields.Find(key);
  auto at = std::find_if(list.begin(), list.end(), [&](const Value& entry) {
    return name != nullptr && SameField(entry, fields, key);
  });
  const bool status_changes =
      at == list.end() || (fields.Find("status") != nullptr && !SameField(*at, fields, "status"));
  Value::Map entry = at != list.end() && at->is_map() ? at->map_value() : Value::Map{};
  for (const auto& [field, value] : fields.map_value()) {
    if (value.is_null()) continue;
    if (field.string_value() == "lastTransitionTime" && !status_changes && at->Find("lastTransitionTime"))
      continue;
    auto existing = std::find_if(entry.begin(), entry.end(),
                                 [&key = field](const auto& item) { return item.first == key; });
    if (existing != entry.end()) {
      existing->second = value;
    } else {
      entry.emplace_back(field, value);
    }
  }
  if (at != list.end()) {
    *at = Value::MakeMap(std::move(entry));
  } else {
    list.push_back(Value::MakeMap(std::move(entry)));
  }
  return list;
}

}  // namespace ruleplane
