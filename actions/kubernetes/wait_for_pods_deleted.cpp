// WaitForPodsDeleted: sends nothing. The executor asks IsDone, and pauses the
// plan while it is not (poll_interval); the pods' own watch events usually
// bring it back sooner.
#include <chrono>

#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

// How soon a plan paused on WaitForPodsDeleted is observed again (the pods'
// own watch events usually bring it back sooner).
constexpr std::chrono::milliseconds kPodsDeletedPollInterval{5000};

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  for (const Value& pod :
       StepValue(step, "names").is_list() ? StepValue(step, "names").list_value() : Value::List{}) {
    auto gone = context.PodGone(pod.string_value(), log);
    if (!gone.ok() || !*gone) return gone;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& /*context*/, RequestLog& /*log*/) {
  return {};
}

}  // namespace

KubernetesActionHandler WaitForPodsDeletedHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = kPodsDeletedPollInterval};
}

}  // namespace ruleplane
