// DeleteStatefulSet: the Etcd's StatefulSet, only the one observed (its uid),
// in the background: kube-controller-manager's garbage collector deletes its
// Pods (WaitForPodsDeleted waits for them), never its PersistentVolumeClaims.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

std::string ObservedUid(const ActionContext& context) {
  return FieldText(context.snapshot(), {"statefulSet", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto statefulset =
      context.client().Get({"apps/v1", "statefulsets", context.namespace_name(), StepName(step), ""}, log);
  if (!statefulset.ok() && statefulset.error().code == ErrorCode::kNotFound) return true;
  if (!statefulset.ok()) return statefulset.error();
  return FieldText(*statefulset, {"metadata", "uid"}) != ObservedUid(context) ||
         ValueAt(*statefulset, {"metadata", "deletionTimestamp"}) != nullptr;
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const std::string uid = ObservedUid(context);
  if (uid.empty())
    return Error{ErrorCode::kFailedPrecondition, "statefulset " + StepName(step) + " was not observed", {}};
  return context.client().Delete({"apps/v1", "statefulsets", context.namespace_name(), StepName(step), ""},
                                 {"", uid}, std::nullopt, log, "Background");
}

}  // namespace

ActionHandler DeleteStatefulSetHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
