#include "actions/etcd/etcd_adapter.h"

#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {
namespace {

Error UnknownAction(const PlanStep& step) {
  return Error{ErrorCode::kInvalidArgument, "the etcd adapter does not perform " + step.action, {}};
}

}  // namespace

std::optional<std::chrono::milliseconds> EtcdAdapter::PollInterval(const PlanStep& step) const {
  const EtcdActionHandler* handler = FindActionHandler(EtcdActionHandlers(), step.action);
  return handler != nullptr ? handler->poll_interval : std::nullopt;
}

Result<bool> EtcdAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  auto members = client_.MemberList(log);
  if (!members.ok()) return members.error();
  const EtcdActionHandler* handler = FindActionHandler(EtcdActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  EtcdActionContext context{client_, std::move(*members)};
  return handler->is_done(step, context, log);
}

Status EtcdAdapter::Perform(const PlanStep& step, RequestLog& log) {
  auto members = client_.MemberList(log);
  if (!members.ok()) return members.error();
  const EtcdActionHandler* handler = FindActionHandler(EtcdActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  EtcdActionContext context{client_, std::move(*members)};
  return PerformFenced(*handler, step, context, log);
}

}  // namespace ruleplane
