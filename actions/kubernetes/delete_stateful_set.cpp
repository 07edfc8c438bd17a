// DeleteStatefulSet: the Etcd's StatefulSet, only the one observed (its uid),
// in the background: kube-controller-manager's garbage collector deletes its
// Pods (WaitForPodsDeleted waits for them), never its PersistentVolumeClaims.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource StatefulSet(const PlanStep& step, const KubernetesActionContext& context) {
  return {"apps/v1", "statefulsets", context.namespace_name(), StepName(step), ""};
}

std::string ObservedUid(const KubernetesActionContext& context) {
  return FieldText(context.snapshot(), {"statefulSet", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.ObservedGone(StatefulSet(step, context), ObservedUid(context), log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.DeleteObserved(StatefulSet(step, context), ObservedUid(context), log, "Background");
}

}  // namespace

KubernetesActionHandler DeleteStatefulSetHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
