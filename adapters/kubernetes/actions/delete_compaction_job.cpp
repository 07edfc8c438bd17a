// DeleteCompactionJob: the finished Job <etcd>-compactor, only the one
// observed (its uid), in the foreground as etcd-druid deletes it: the Job
// stays, marked, until its Pod is gone, and the rules start no other Job
// meanwhile.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

std::string ObservedJobUid(const ActionContext& context) {
  return FieldText(context.snapshot(), {"compactionJob", "metadata", "uid"});
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto job = context.client().Get({"batch/v1", "jobs", context.namespace_name(), StepName(step), ""}, log);
  if (!job.ok() && job.error().code == ErrorCode::kNotFound) return true;
  if (!job.ok()) return job.error();
  return FieldText(*job, {"metadata", "uid"}) != ObservedJobUid(context) ||
         ValueAt(*job, {"metadata", "deletionTimestamp"}) != nullptr;
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const std::string uid = ObservedJobUid(context);
  if (uid.empty())
    return Error{ErrorCode::kFailedPrecondition, "job " + StepName(step) + " was not observed", {}};
  return context.client().Delete({"batch/v1", "jobs", context.namespace_name(), StepName(step), ""},
                                 {"", uid}, std::nullopt, log, "Foreground");
}

}  // namespace

ActionHandler DeleteCompactionJobHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
