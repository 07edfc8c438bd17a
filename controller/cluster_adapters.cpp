#include "controller/cluster_adapters.h"

#include <algorithm>

namespace ruleplane {

bool PlansMemberCalls(const Plan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const PlanStep& step) {
    return step.adapter == "etcd" || step.action == "TriggerFullSnapshot";
  });
}

ClusterAdapters::ClusterAdapters(KubeClient& client, const Snapshot& snapshot, const MemberEndpoints* members,
                                 std::vector<std::string> member_init_rules)
    : kubernetes_(client, snapshot, std::move(member_init_rules)),
      members_(members != nullptr ? std::make_unique<EtcdClient>(members->config) : nullptr),
      sidecar_(snapshot, client, members_.get()) {
  set_.Add(&kubernetes_);
  set_.Add(&sidecar_);
  if (members_ != nullptr) {
    // Fenced as the Kubernetes client is: nothing reaches a member once the
    // Lease is gone, and a call in flight ends.
    members_->set_guard(client.guard());
    members_->set_cancel(client.cancel());
    etcd_ = std::make_unique<EtcdAdapter>(*members_);
    set_.Add(etcd_.get());
  }
}

std::vector<std::string> ClusterAdapterKinds() { return {"backup-sidecar", "etcd", "kubernetes"}; }

}  // namespace ruleplane
