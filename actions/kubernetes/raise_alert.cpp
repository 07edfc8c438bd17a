// RaiseAlert: a Warning Event RuleplaneAlert on the Etcd, its message the step's summary.
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

constexpr const char* kReason = "RuleplaneAlert";

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.EventRecorded(kReason, StepValue(step, "summary").string_value(), log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.RecordEvent(step, "Warning", kReason, StepValue(step, "summary").string_value(), log);
}

}  // namespace

KubernetesActionHandler RaiseAlertHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
