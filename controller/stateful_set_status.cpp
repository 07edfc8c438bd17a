#include "controller/stateful_set_status.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {

std::string SelectorText(const Value& selector) {
  std::vector<std::pair<std::string, std::string>> labels;
  if (const Value* match = ValueAt(selector, {"matchLabels"}); match != nullptr && match->is_map()) {
    for (const auto& [key, value] : match->map_value()) {
      if (key.is_string() && value.is_string()) labels.emplace_back(key.string_value(), value.string_value());
    }
  }
  std::sort(labels.begin(), labels.end());
  std::string text;
  for (const auto& [key, value] : labels) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text;
}

Value StatefulSetStatus(const Value& etcd, const Value* stateful_set) {
  if (stateful_set != nullptr && stateful_set->is_null()) stateful_set = nullptr;
  const Value rendered = EtcdPodSelector(etcd);
  const Value* selector = stateful_set != nullptr ? ValueAt(*stateful_set, {"spec", "selector"}) : nullptr;
  if (selector == nullptr) selector = &rendered;
  auto replicas = [&](std::string_view field) {
    return Value::Int(stateful_set != nullptr ? FieldInt(*stateful_set, {"status", field}, 0) : 0);
  };
  Value::Map fields = {{Value::String("currentReplicas"), replicas("currentReplicas")},
                       {Value::String("readyReplicas"), replicas("readyReplicas")},
                       {Value::String("updatedReplicas"), replicas("updatedReplicas")},
                       {Value::String("selector"), Value::String(SelectorText(*selector))},
                       {Value::String("labelSelector"), *selector}};
  // Without a StatefulSet etcd-druid keeps status.replicas and the reference as they were.
  if (stateful_set != nullptr) {
    fields.emplace_back(Value::String("replicas"), replicas("currentReplicas"));
    fields.emplace_back(Value::String("etcd"),
                        Value::MakeMap({{Value::String("apiVersion"), Value::String("apps/v1")},
                                        {Value::String("kind"), Value::String("StatefulSet")},
                                        {Value::String("name"),
                                         Value::String(FieldText(*stateful_set, {"metadata", "name"}))}}));
  }
  const bool current = std::all_of(fields.begin(), fields.end(), [&](const auto& field) {
    const Value* written = ValueAt(etcd, {"status", field.first.string_value()});
    return written != nullptr && *written == field.second;
  });
  return current ? Value() : Value::MakeMap(std::move(fields));
}

}  // namespace ruleplane
