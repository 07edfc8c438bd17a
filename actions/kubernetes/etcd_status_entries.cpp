#include "actions/kubernetes/etcd_status_entries.h"

#include <ctime>

#include "actions/step_params.h"
#include "adapters/kubernetes/etcd_status.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/time_util.h"

namespace ruleplane {

Result<std::optional<Value>> FreshStatusEntry(KubernetesActionContext& context, std::string_view list_field,
                                              std::string_view key_field, const std::string& key,
                                              RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  for (const Value& entry : FieldList(*etcd, {"status", list_field})) {
    if (FieldText(entry, {key_field}) == key) return std::optional<Value>(entry);
  }
  return std::optional<Value>();
}

bool HasStepFields(const Value& entry, const PlanStep& step, std::initializer_list<std::string_view> fields) {
  for (std::string_view field : fields) {
    const Value& wanted = StepValue(step, field);
    if (wanted.is_null()) continue;
    const Value* have = ValueAt(entry, {field});
    if (have == nullptr || !(*have == wanted)) return false;
  }
  return true;
}

Value StatusEntryFromStep(const PlanStep& step, const std::string& key_field, const std::string& key,
                          std::initializer_list<const char*> fields) {
  Value::Map entry{{Value::String(key_field), Value::String(key)}};
  for (const char* field : fields) {
    Value value = StepValue(step, field);
    if (value.is_null() && std::string_view(field) == "lastTransitionTime") {
      if (auto now = TimestampFromUnixSeconds(std::time(nullptr)); now.ok())
        value = Value::String(FormatRfc3339(*now));
    }
    entry.emplace_back(Value::String(field), std::move(value));
  }
  return Value::MakeMap(std::move(entry));
}

Status WriteStatusEntry(KubernetesActionContext& context, const std::string& list_field,
                        std::string_view key_field, const Value& entry, RequestLog& log) {
  const Value::List list = FieldList(context.TrackedEtcd(), {"status", list_field});
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String(list_field), Value::MakeList(WithStatusEntry(list, key_field, entry))}}),
      log);
}

Status RemoveStatusEntry(KubernetesActionContext& context, const std::string& list_field,
                         std::string_view key_field, const std::string& key, RequestLog& log) {
  Value::List list = FieldList(context.TrackedEtcd(), {"status", list_field});
  std::erase_if(list, [&](const Value& entry) { return FieldText(entry, {key_field}) == key; });
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String(list_field), Value::MakeList(std::move(list))}}), log);
}

}  // namespace ruleplane
