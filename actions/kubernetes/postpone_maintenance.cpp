// PostponeMaintenance: a Normal Event MaintenancePostponed on the Etcd,
// "<operation>: <reason>".
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

constexpr const char* kReason = "MaintenancePostponed";

std::string Message(const PlanStep& step) {
  return StepValue(step, "operation").string_value() + ": " + StepValue(step, "reason").string_value();
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.EventRecorded(kReason, Message(step), log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.RecordEvent(step, "Normal", kReason, Message(step), log);
}

}  // namespace

KubernetesActionHandler PostponeMaintenanceHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
