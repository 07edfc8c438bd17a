#include "actions/kubernetes/etcd_finalizer.h"

#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {

bool HasEtcdFinalizer(const Value& etcd) {
  for (const Value& finalizer : FieldList(etcd, {"metadata", "finalizers"})) {
    if (finalizer.is_string() && finalizer.string_value() == kEtcdFinalizer) return true;
  }
  return false;
}

Status WriteEtcdFinalizer(KubernetesActionContext& context, bool present, RequestLog& log) {
  Value::List finalizers;
  for (const Value& finalizer : FieldList(context.TrackedEtcd(), {"metadata", "finalizers"})) {
    if (!finalizer.is_string() || finalizer.string_value() != kEtcdFinalizer) finalizers.push_back(finalizer);
  }
  if (present) finalizers.push_back(Value::String(kEtcdFinalizer));
  return context.PatchEtcdMetadata({{Value::String("finalizers"), Value::MakeList(std::move(finalizers))}},
                                   log);
}

}  // namespace ruleplane
