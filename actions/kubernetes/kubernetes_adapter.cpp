#include "adapters/kubernetes/kubernetes_adapter.h"

#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {

KubernetesAdapter::KubernetesAdapter(KubeClient& client, const Snapshot& snapshot,
                                     std::vector<std::string> member_init_rules)
    : context_(client, snapshot, std::move(member_init_rules)) {}

Status KubernetesAdapter::PatchEtcdStatus(const Value& status_patch, RequestLog& log) {
  return context_.PatchEtcdStatus(status_patch, log);
}

std::optional<std::chrono::milliseconds> KubernetesAdapter::PollInterval(const PlanStep& step) const {
  const ActionHandler* handler = FindKubernetesActionHandler(step.action);
  return handler != nullptr ? handler->poll_interval : std::nullopt;
}

Result<bool> KubernetesAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const ActionHandler* handler = FindKubernetesActionHandler(step.action);
  if (handler == nullptr) return false;  // Perform says why it cannot
  // After the teardown's last step the other rule sets' steps for the Etcd
  // (status writes) have nothing left to act on: skipped, not failed.
  auto torn_down = context_.EtcdTornDown(log);
  if (!torn_down.ok()) return torn_down.error();
  if (*torn_down) return true;
  return handler->is_done(step, context_, log);
}

Status KubernetesAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const ActionHandler* handler = FindKubernetesActionHandler(step.action);
  if (handler == nullptr) {
    return Error{
        ErrorCode::kFailedPrecondition, "the kubernetes adapter does not perform " + step.action, {}};
  }
  // A write to another object than the Etcd rests on the Etcd's spec as
  // observed: fenced by its uid and generation, read now (the Etcd's own
  // writes are fenced by its resourceVersion).
  if (handler->fenced_by_etcd_spec && !log.dry_run()) {
    if (Status unchanged = context_.CheckEtcdAsObserved(log); !unchanged.ok()) return unchanged;
  }
  return handler->perform(step, context_, log);
}

}  // namespace ruleplane
