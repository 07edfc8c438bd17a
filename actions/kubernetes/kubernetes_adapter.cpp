#include "actions/kubernetes/kubernetes_adapter.h"

#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {

KubernetesAdapter::KubernetesAdapter(KubeClient& client, const Snapshot& snapshot,
                                     std::vector<std::string> member_init_rules)
    : context_(client, snapshot, std::move(member_init_rules)) {}

Status KubernetesAdapter::PatchEtcdStatus(const Value& status_patch, RequestLog& log) {
  return context_.PatchEtcdStatus(status_patch, log);
}

std::optional<std::chrono::milliseconds> KubernetesAdapter::PollInterval(const PlanStep& step) const {
  const KubernetesActionHandler* handler = FindActionHandler(KubernetesActionHandlers(), step.action);
  return handler != nullptr ? handler->poll_interval : std::nullopt;
}

Result<bool> KubernetesAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const KubernetesActionHandler* handler = FindActionHandler(KubernetesActionHandlers(), step.action);
  if (handler == nullptr) return false;  // Perform says why it cannot
  // After the teardown's last step the other rule sets' steps for the Etcd
  // (status writes) have nothing left to act on: skipped, not failed.
  auto torn_down = context_.EtcdTornDown(log);
  if (!torn_down.ok()) return torn_down.error();
  if (*torn_down) return true;
  return handler->is_done(step, context_, log);
}

Status KubernetesAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const KubernetesActionHandler* handler = FindActionHandler(KubernetesActionHandlers(), step.action);
  if (handler == nullptr) {
    return Error{
        ErrorCode::kFailedPrecondition, "the kubernetes adapter does not perform " + step.action, {}};
  }
  // A write to another object than the Etcd rests on the Etcd's spec as
  // observed: fenced by its uid and generation, read now (the Etcd's own
  // writes are fenced by its resourceVersion).
  return PerformFenced(*handler, step, context_, log);
}

}  // namespace ruleplane
