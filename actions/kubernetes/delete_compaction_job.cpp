// DeleteCompactionJob: the finished Job <etcd>-compactor, only the one
// observed (its uid), in the foreground as etcd-druid deletes it: the Job
// stays, marked, until its Pod is gone, and the rules start no other Job
// meanwhile.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource Job(const PlanStep& step, const ActionContext& context) {
  return {"batch/v1", "jobs", context.namespace_name(), StepName(step), ""};
}

std::string ObservedUid(const ActionContext& context) {
  return FieldText(context.snapshot(), {"compactionJob", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.ObservedGone(Job(step, context), ObservedUid(context), log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.DeleteObserved(Job(step, context), ObservedUid(context), log, "Foreground");
}

}  // namespace

ActionHandler DeleteCompactionJobHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
