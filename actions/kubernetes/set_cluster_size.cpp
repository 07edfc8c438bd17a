// SetClusterSize: the Etcd's status.clusterSize.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return FieldInt(*etcd, {"status", "clusterSize"}, -1) == IntParam(step, "size");
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String("clusterSize"), Value::Int(IntParam(step, "size"))}}), log);
}

}  // namespace

KubernetesActionHandler SetClusterSizeHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
