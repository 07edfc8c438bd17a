#include "actions/local/local_adapter.h"

#include "actions/local/local_action_handler.h"

namespace ruleplane {
namespace {

Error UnknownAction(const PlanStep& step) {
  return Error{ErrorCode::kInvalidArgument, "the local adapter does not perform " + step.action, {}};
}

}  // namespace

LocalAdapter::LocalAdapter(LocalMember member, BackupStore* store, EtcdClient* cluster)
    : context_{std::move(member), store, cluster} {}

std::optional<std::chrono::milliseconds> LocalAdapter::PollInterval(const PlanStep& step) const {
  const LocalActionHandler* handler = FindActionHandler(LocalActionHandlers(), step.action);
  return handler != nullptr ? handler->poll_interval : std::nullopt;
}

Result<bool> LocalAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const LocalActionHandler* handler = FindActionHandler(LocalActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  return handler->is_done(step, context_, log);
}

Status LocalAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const LocalActionHandler* handler = FindActionHandler(LocalActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  return PerformFenced(*handler, step, context_, log);
}

}  // namespace ruleplane
