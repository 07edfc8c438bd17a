// DeleteCompactionJob: the finished Job <etcd>-compactor, only the one
// observed (its uid), in the foreground as etcd-druid deletes it: the Job
// stays, marked, until its Pod is gone, and the rules start no other Job
// meanwhile.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource Job(const PlanStep& step, const KubernetesActionContext& context) {
  return {"batch/v1", "jobs", context.namespace_name(), StepName(step), ""};
}

std::string ObservedUid(const KubernetesActionContext& context) {
  return FieldText(context.snapshot(), {"compactionJob", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.ObservedGone(Job(step, context), ObservedUid(context), log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.DeleteObserved(Job(step, context), ObservedUid(context), log, "Foreground");
}

}  // namespace

KubernetesActionHandler DeleteCompactionJobHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
