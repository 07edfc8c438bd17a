// WaitForPodsDeleted: sends nothing. The executor asks IsDone, and pauses the
// plan while it is not (poll_interval); the pods' own watch events usually
// bring it back sooner.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/kubernetes_adapter.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  for (const Value& pod :
       StepValue(step, "names").is_list() ? StepValue(step, "names").list_value() : Value::List{}) {
    auto gone = context.PodGone(pod.string_value(), log);
    if (!gone.ok() || !*gone) return gone;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, ActionContext& /*context*/, RequestLog& /*log*/) { return {}; }

}  // namespace

ActionHandler WaitForPodsDeletedHandler() {
  return {.is_done = IsDone,
          .perform = Perform,
          .fenced_by_etcd_spec = false,
          .poll_interval = kPodsDeletedPollInterval};
}

}  // namespace ruleplane
