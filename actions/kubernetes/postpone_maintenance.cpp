// PostponeMaintenance: a Normal Event MaintenancePostponed on the Etcd,
// "<operation>: <reason>".
#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {
namespace {

constexpr const char* kReason = "MaintenancePostponed";

std::string Message(const PlanStep& step) {
  return StepValue(step, "operation").string_value() + ": " + StepValue(step, "reason").string_value();
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.EventRecorded(kReason, Message(step), log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.RecordEvent(step, "Normal", kReason, Message(step), log);
}

}  // namespace

ActionHandler PostponeMaintenanceHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
