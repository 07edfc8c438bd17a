#include "adapters/kubernetes/etcd_finalizer.h"

#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {

bool HasEtcdFinalizer(const Value& etcd) {
  for (const Value& finalizer : FieldList(etcd, {"metadata", "finalizers"})) {
    if (finalizer.is_string() && finalizer.string_value() == kEtcdFinalizer) return true;
  }
  return false;
}

Status WriteEtcdFinalizer(ActionContext& context, bool present, RequestLog& log) {
  Value& etcd = context.TrackedEtcd();
  const std::string version = FieldText(etcd, {"metadata", "resourceVersion"});
  if (version.empty())
    return Error{ErrorCode::kFailedPrecondition, "the Etcd was observed without a resourceVersion", {}};
  Value::List finalizers;
  for (const Value& finalizer : FieldList(etcd, {"metadata", "finalizers"})) {
    if (!finalizer.is_string() || finalizer.string_value() != kEtcdFinalizer) finalizers.push_back(finalizer);
  }
  if (present) finalizers.push_back(Value::String(kEtcdFinalizer));
  const Value patch = Value::MakeMap(
      {{Value::String("metadata"),
        Value::MakeMap({{Value::String("resourceVersion"), Value::String(version)},
                        {Value::String("finalizers"), Value::MakeList(std::move(finalizers))}})}});
  auto patched = context.client().MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", context.namespace_name(), context.etcd_name(), ""}, patch,
      log);
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) etcd = *patched;
  return {};
}

}  // namespace ruleplane
