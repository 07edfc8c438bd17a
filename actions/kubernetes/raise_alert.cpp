// RaiseAlert: a Warning Event RuleplaneAlert on the Etcd, its message the step's summary.
#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {
namespace {

constexpr const char* kReason = "RuleplaneAlert";

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.EventRecorded(kReason, StepValue(step, "summary").string_value(), log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.RecordEvent(step, "Warning", kReason, StepValue(step, "summary").string_value(), log);
}

}  // namespace

ActionHandler RaiseAlertHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
