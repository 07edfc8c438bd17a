// SetClusterSize: the Etcd's status.clusterSize.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return FieldInt(*etcd, {"status", "clusterSize"}, -1) == IntParam(step, "size");
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String("clusterSize"), Value::Int(IntParam(step, "size"))}}), log);
}

}  // namespace

ActionHandler SetClusterSizeHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
