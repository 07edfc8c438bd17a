// DeleteStatefulSet: the Etcd's StatefulSet, only the one observed (its uid),
// in the background: kube-controller-manager's garbage collector deletes its
// Pods (WaitForPodsDeleted waits for them), never its PersistentVolumeClaims.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource StatefulSet(const PlanStep& step, const ActionContext& context) {
  return {"apps/v1", "statefulsets", context.namespace_name(), StepName(step), ""};
}

std::string ObservedUid(const ActionContext& context) {
  return FieldText(context.snapshot(), {"statefulSet", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.ObservedGone(StatefulSet(step, context), ObservedUid(context), log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.DeleteObserved(StatefulSet(step, context), ObservedUid(context), log, "Background");
}

}  // namespace

ActionHandler DeleteStatefulSetHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
