// RemoveOperationAnnotation: etcd-druid's operation annotation
// (druid.gardener.cloud/operation, and the deprecated gardener.cloud/operation)
// off the Etcd once the spec it asked for is reconciled, as etcd-druid's
// completeReconcile removes it; fenced by the Etcd's resourceVersion, so an
// annotation set again since the plan's observation stays.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

constexpr std::string_view kOperationAnnotations[] = {"druid.gardener.cloud/operation",
                                                      "gardener.cloud/operation"};

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  const Value* annotations = ValueAt(*etcd, {"metadata", "annotations"});
  if (annotations == nullptr || !annotations->is_map()) return true;
  for (std::string_view key : kOperationAnnotations) {
    if (annotations->Find(key) != nullptr) return false;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  Value::Map removed;
  for (std::string_view key : kOperationAnnotations)
    removed.emplace_back(Value::String(std::string(key)), Value::Null());
  return context.PatchEtcdMetadata({{Value::String("annotations"), Value::MakeMap(std::move(removed))}}, log);
}

}  // namespace

KubernetesActionHandler RemoveOperationAnnotationHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
