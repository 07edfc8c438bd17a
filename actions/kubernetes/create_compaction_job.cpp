// CreateCompactionJob: <etcd>-compactor. AlreadyExists is done: a job of this
// name runs or ran; etcd-druid waits for it too.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  return context.Exists(
      {"batch/v1", "jobs", context.namespace_name(), CompactionJobName(context.observed_etcd()), ""}, log);
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto job = CompactionJob(context.observed_etcd());
  if (!job.ok()) return job.error();
  return context.CreateUnlessPresent({"batch/v1", "jobs", context.namespace_name(), "", ""}, *job, log);
}

}  // namespace

ActionHandler CreateCompactionJobHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
