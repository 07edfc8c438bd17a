// AbortInitialization (reason): ends the initialization with an error saying
// why; it writes nothing, and is never found done.
#include "actions/local/local_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, LocalActionContext& /*context*/, RequestLog& /*log*/) {
  return false;
}

Status Perform(const PlanStep& step, LocalActionContext& /*context*/, RequestLog& /*log*/) {
  return Error{ErrorCode::kFailedPrecondition, "initialization aborted: " + StepParam(step, "reason"), {}};
}

}  // namespace

LocalActionHandler AbortInitializationHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
