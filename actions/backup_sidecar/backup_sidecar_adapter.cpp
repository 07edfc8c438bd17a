#include "actions/backup_sidecar/backup_sidecar_adapter.h"

#include "actions/backup_sidecar/backup_sidecar_action_handler.h"

namespace ruleplane {
namespace {

Error UnknownAction(const PlanStep& step) {
  return Error{ErrorCode::kInvalidArgument, "the backup-sidecar adapter has no action " + step.action, {}};
}

}  // namespace

BackupSidecarAdapter::BackupSidecarAdapter(const Snapshot& snapshot, KubeClient& kube, EtcdClient* members,
                                           std::chrono::milliseconds timeout)
    : context_{snapshot.document, kube, timeout, members} {}

std::optional<std::chrono::milliseconds> BackupSidecarAdapter::PollInterval(const PlanStep& step) const {
  const BackupSidecarActionHandler* handler = FindActionHandler(BackupSidecarActionHandlers(), step.action);
  return handler != nullptr ? handler->poll_interval : std::nullopt;
}

Result<bool> BackupSidecarAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const BackupSidecarActionHandler* handler = FindActionHandler(BackupSidecarActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  return handler->is_done(step, context_, log);
}

Status BackupSidecarAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const BackupSidecarActionHandler* handler = FindActionHandler(BackupSidecarActionHandlers(), step.action);
  if (handler == nullptr) return UnknownAction(step);
  return PerformFenced(*handler, step, context_, log);
}

}  // namespace ruleplane
