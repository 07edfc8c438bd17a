// DeletePod: a member Pod, deleted directly (never evicted), and only the one observed (its uid).
#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.PodGone(StepName(step), log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const std::string name = StepName(step);
  return context.DeleteObserved({"v1", "pods", context.namespace_name(), name, ""},
                                context.ObservedUid("pods", name), log);
}

}  // namespace

ActionHandler DeletePodHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
