// DeletePod: a member Pod, deleted directly (never evicted), and only the one observed (its uid).
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.PodGone(StepName(step), log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const std::string name = StepName(step);
  return context.DeleteObserved({"v1", "pods", context.namespace_name(), name, ""},
                                context.ObservedUid("pods", name), log);
}

}  // namespace

KubernetesActionHandler DeletePodHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
